package enginetest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// aggVariants are the engines an aggregation test runs on: both, and the
// ptrace engine with its in-process pads and without.
func aggVariants() []struct {
	name  string
	need  func(testing.TB)
	extra []string
} {
	var vs []struct {
		name  string
		need  func(testing.TB)
		extra []string
	}
	for _, b := range backends {
		vs = append(vs, struct {
			name  string
			need  func(testing.TB)
			extra []string
		}{b.name, b.need, []string{"--backend", b.name}})
		if b.name == "ptrace" {
			vs = append(vs, struct {
				name  string
				need  func(testing.TB)
				extra []string
			}{"ptrace-nopads", b.need, []string{"--backend", b.name, "--no-pads"}})
		}
	}
	return vs
}

// aggRun runs utap with the specs on argv, the output in a file, and
// returns it and the run's stderr.
func aggRun(t *testing.T, extra []string, specs []string, argv ...string) (out, stderr string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "out")
	args := append([]string{"run", "-o", file}, extra...)
	for _, s := range specs {
		args = append(args, "-e", s)
	}
	r := utap(t, append(append(args, "--"), argv...)...)
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return string(data), r.stderr
}

// TestCLIAggregations: work(1, i) for i < 10 gives exact counts, sums and
// a histogram; two conditions on one function are two maps; a bpftrace
// one-liner reads arg0 as utap's arg1; events of the other specs print as
// usual, those of aggregated specs not at all.
func TestCLIAggregations(t *testing.T) {
	bin := etWork(t)
	want := `[pid PID] work(7)
@work: 
[0]                    1 |@@@@@@@@@@@@@                                       |
[1]                    1 |@@@@@@@@@@@@@                                       |
[2, 4)                 2 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |
[4, 8)                 4 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|
[8, 16)                2 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |

@"work if arg2 < 5": 5
@"work if arg2 >= 5": 5
@sums[1]: 45
@big: 3
@ret: count 10, average 5, total 55

`
	for _, v := range aggVariants() {
		t.Run(v.name, func(t *testing.T) {
			v.need(t)
			out, stderr := aggRun(t, append([]string{"-q"}, v.extra...), []string{
				"work => hist(arg2)",
				"work(arg2) if arg2 == 7",
				"work if arg2 < 5 => count()",
				"work if arg2 >= 5 => count()",
				"work => @sums = sum(arg2) by arg1",
				"uprobe:work /arg1 >= 7/ { @big = count(); }",
				"return:work => @ret = stats(ret)",
			}, bin, "count", "10")
			if out = pidRE.ReplaceAllString(out, "[pid PID]"); out != want {
				t.Errorf("got\n%s\nwant\n%s", out, want)
			}
			if stderr != "" {
				t.Errorf("stderr %q with -q", stderr)
			}
		})
	}
	t.Run("pad", func(t *testing.T) {
		// One probe on work gets an in-process pad: the aggregation
		// takes its records as it takes breakpoint events.
		b := backends[0]
		b.need(t)
		out, stderr := aggRun(t, []string{"--backend", b.name, "-v"}, []string{"work => @s = sum(arg2) by arg1"}, bin, "count", "10")
		if out != "@s[1]: 45\n" || !strings.Contains(stderr, "in-process pad") {
			t.Errorf("output %q, stderr %q; want @s[1]: 45 from a pad", out, stderr)
		}
	})
	t.Run("interval", func(t *testing.T) {
		// The command sleeps 300 ms: many 10 ms intervals, each a time
		// line and the maps; the maps once more at exit.
		b := backends[0]
		b.need(t)
		out, _ := aggRun(t, []string{"-q", "--backend", b.name, "--interval", "10ms"}, []string{"leaf => count()"}, stackChain(t), "3", "300")
		re := regexp.MustCompile(`^(\d\d:\d\d:\d\d\n@leaf: [03]\n)+@leaf: 3\n$`)
		if !re.MatchString(out) {
			t.Errorf("got\n%s\nwant time lines each followed by the map, then the map", out)
		}
	})
	t.Run("notes-json", func(t *testing.T) {
		b := backends[0]
		b.need(t)
		out, stderr := aggRun(t, []string{"--backend", b.name, "--format", "json"}, []string{
			"work => hist(arg2)", "work { @[arg0] = count(); }",
		}, bin, "count", "3")
		wantOut := `{"type": "hist", "data": {"@work": [{"min": 0, "max": 0, "count": 1}, {"min": 1, "max": 1, "count": 1}, {"min": 2, "max": 3, "count": 1}]}}
{"type": "map", "data": {"@": {"1": 3}}}
`
		if out != wantOut {
			t.Errorf("got\n%s\nwant\n%s", out, wantOut)
		}
		note := `utap: "work { @[arg0] = count(); }" read as "work => @ = count() by arg1" (bpftrace's arg0 is utap's arg1, its retval utap's ret)`
		if !strings.Contains(stderr, note+"\n") {
			t.Errorf("stderr %q, want the line %q", stderr, note)
		}
	})
}

// TestCLIAggregateStacks: count() by ustack keys the calls of leaf by
// its symbolized frames (the events' stacks, -k implied); the events of
// another spec print without stacks.
func TestCLIAggregateStacks(t *testing.T) {
	bin := stackChain(t)
	re := regexp.MustCompile(`^\[pid \d+\] a\(1\)\n@leaf\[\n    leaf\+0\n    c\+\d+\n    b\+\d+\n    a\+\d+\n\]: 3\n@\[stack_chain[^,]*, \n    c\+0\n\]: 3\n$`)
	for _, v := range aggVariants() {
		t.Run(v.name, func(t *testing.T) {
			v.need(t)
			// 300 ms before exiting: the uprobe engine's frames are
			// named from the process's maps.
			out, _ := aggRun(t, append([]string{"-q", "--entry-only"}, v.extra...),
				[]string{"leaf => count() by ustack(4)", "a(arg1) if arg1 == 1", "c { @[comm, ustack(1)] = count(); }"}, bin, "3", "300")
			if !re.MatchString(out) {
				t.Errorf("got\n%s\nwant it to match %s", out, re)
			}
		})
	}
}
