//go:build linux && amd64

package uprobe

import (
	"bytes"
	"testing"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/probe"
)

func TestFetchArgs(t *testing.T) {
	need.Uprobes(t)
	bin := fixture.C(t, "et_work.c")
	work := &probe.Spec{Text: "work(arg1,arg2)", Symbol: "work", Fetches: fetches(arg(1), arg(2))}
	greet := &probe.Spec{Text: "greet(str(arg1),arg2)", Symbol: "greet", Fetches: fetches(&probe.StrOf{Addr: arg(1)}, arg(2))}
	peek := &probe.Spec{Text: "peek(*arg1)", Symbol: "peek", Fetches: fetches(&probe.Deref{T: probe.S64, Addr: arg(1)}, arg(2))}
	sites := []probe.Site{
		funcSite(t, bin, "work", 0, work),
		funcSite(t, bin, "greet", 0, greet),
		funcSite(t, bin, "peek", 0, peek),
	}
	var out bytes.Buffer
	c, res := run(t, &Engine{}, probe.Target{Argv: []string{bin, "args"}, Stdout: &out}, sites)
	if out.String() != "args 73\n" || res.ExitCode != 0 || res.Lost != 0 {
		t.Fatalf("output %q, result %+v", out.String(), res)
	}
	var got []string
	for _, ev := range c.evs {
		s := ev.Func + ":"
		for _, a := range ev.Args {
			switch {
			case a.Err:
				s += " ?"
			case a.IsStr:
				s += " " + a.Str
			default:
				s += " " + itoa(a.Int)
			}
		}
		got = append(got, s)
		if ev.PID == 0 || ev.TID == 0 || ev.TimeNs == 0 || ev.Kind != "entry" {
			t.Errorf("bad event header %+v", ev)
		}
	}
	want := []string{"work: 1 2", "work: 3 4", "work: 5 6", "work: 4 3", "greet: hello 7", "greet: world 8", "peek: ? 1", "peek: 42 2"}
	if len(got) != len(want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d: got %q, want %q", i, got[i], want[i])
		}
	}
}

func itoa(v uint64) string {
	b := []byte{}
	if v == 0 {
		return "0"
	}
	for ; v > 0; v /= 10 {
		b = append([]byte{byte('0' + v%10)}, b...)
	}
	return string(b)
}
