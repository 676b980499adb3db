//go:build linux && amd64

package uprobe

import (
	"bytes"
	"errors"
	"strings"
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
	bin := fixture.C(t, "et_work.c")
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

// TestDepthLimit compiles the deepest expressions the parser accepts and
// refuses, with ErrTooDeep, one that needs more than MaxDepth slots.
func TestDepthLimit(t *testing.T) {
	var deepest *probe.Spec
	for n := 2; ; n += 2 {
		spec, err := probe.Parse("work(" + nested(n) + ", " + strings.Repeat("-(", n) + "arg1" + strings.Repeat(")", n) + ")")
		if err != nil {
			break
		}
		deepest = spec
	}
	site := probe.Site{Spec: deepest, Fetches: deepest.Fetches}
	if _, err := compile(&site, maps{}, config{kind: probe.Entry, v4: true}); err != nil {
		t.Fatalf("%s: %v", deepest.Text, err)
	}
	var tree func(h int) probe.Expr
	tree = func(h int) probe.Expr {
		if h == 0 {
			return &probe.Cast{To: probe.S64, X: arg(1)}
		}
		return &probe.Binary{Op: probe.OpSub, X: tree(h - 1), Y: tree(h - 1), T: probe.S64}
	}
	site.Fetches = fetches(tree(MaxDepth + 1))
	_, err := compile(&site, maps{}, config{kind: probe.Entry, v4: true})
	if !errors.Is(err, ErrTooDeep) {
		t.Fatalf("got %v, want ErrTooDeep", err)
	}
	site.Fetches = fetches(&probe.Ident{Name: "len"})
	if _, err := compile(&site, maps{}, config{kind: probe.Entry, v4: true}); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("unbound name: got %v", err)
	}
}
