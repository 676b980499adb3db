package uprobe

import (
	"bytes"
	"errors"
	"testing"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/probe"
)

// TestOneProgramManySites binds one spec to three functions, as a glob
// does: one program serves them, told apart by the attach cookie, through
// a uprobe_multi link or one perf link per site.
func TestOneProgramManySites(t *testing.T) {
	need.Uprobes(t)
	bin := fixture.C(t, "up_work.c")
	spec := &probe.Spec{Text: "*(arg2)", Symbol: "*", Fetches: fetches(arg(2))}
	var sites []probe.Site
	for _, fn := range []string{"work", "greet", "peek"} {
		sites = append(sites, funcSite(t, bin, fn, 0, spec))
	}
	for _, noMulti := range []bool{false, true} {
		c, res := run(t, &Engine{NoMulti: noMulti}, probe.Target{Argv: []string{bin, "args"}, Stdout: &bytes.Buffer{}}, sites)
		got := ""
		for _, ev := range c.evs {
			got += ev.Func + "=" + itoa(ev.Args[0].Int) + " "
		}
		want := "work=2 work=4 work=6 work=3 greet=7 greet=8 peek=1 peek=2 "
		if got != want || res.Lost != 0 {
			t.Errorf("noMulti=%v: got %q, want %q", noMulti, got, want)
		}
	}
}

func TestDepthLimit(t *testing.T) {
	var e probe.Expr = arg(1)
	for i := 0; i < MaxDepth+1; i++ {
		e = &probe.Binary{Op: probe.OpAdd, X: arg(1), Y: e, T: probe.U64}
	}
	site := probe.Site{Spec: &probe.Spec{Text: "deep"}, Fetches: fetches(e)}
	_, err := compile(&site, probe.Entry, maps{tgids: -1}, true)
	if !errors.Is(err, ErrTooDeep) {
		t.Fatalf("got %v, want ErrTooDeep", err)
	}
	site.Fetches = fetches(&probe.Ident{Name: "len"})
	if _, err := compile(&site, probe.Entry, maps{tgids: -1}, true); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("unbound name: got %v", err)
	}
}
