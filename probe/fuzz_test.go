package probe

import "testing"

// FuzzParse checks that Parse never panics and that every spec it accepts
// prints to a canonical form that re-parses to the same spec.
func FuzzParse(f *testing.F) {
	for _, tt := range parseTests {
		f.Add(tt.text)
	}
	for _, s := range []string{
		"work(a,", "work if (arg1", `work if "\x41" == str(arg1 + 1)`, "work if 'x' < '\\n'",
		"a:b:c", "main.(*T[int]).M", "work(arg1 ? 1 : 2 : x)", "work%return(ret:x) if ret != -1",
		"usdt:python:gc__start(arg1)", "usdt:/bin/x:p*:n?(str(arg1)) if arg2 > 1", "entry:usdt:f", "usdt:a:b:c:d",
		"work if arg1 > 5 => avg(arg2) by arg1, comm", "libc:malloc { @[ustack(3), arg0] = lhist(arg1, 0, 64, 8); }",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		checkRoundTrip(t, text)
	})
}
