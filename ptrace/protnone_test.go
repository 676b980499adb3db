//go:build linux && amd64

package ptrace

import (
	"context"
	"io"
	"testing"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/probe"
)

// A read of a PROT_NONE page fails, as it does for the program itself and
// for the uprobe engine: reads go through process_vm_readv, never
// /proc/PID/mem, which would read it (FOLL_FORCE).
func TestReadProtNone(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "pt_protnone.c")
	s := specSite(t, bin, "show", `show(*arg1, str(arg1), *arg2, str(arg2)) if str(arg1) != "x"`)
	// The condition reads the PROT_NONE page too: a faulting read makes
	// it false, so the same probe without it must be the one reporting.
	s2 := specSite(t, bin, "show", `show(*arg1, str(arg1), *arg2, str(arg2))`)
	for _, s := range []*probe.Site{&s, &s2} {
		if sp, err := compileSite(s); err != nil || sp.ref {
			t.Fatalf("%s: not compiled to bytecode (%v)", s.Spec.Text, err)
		}
	}
	var evs []probe.Event
	res, err := (&Engine{}).Trace(context.Background(), probe.Target{Argv: []string{bin}, Stdout: io.Discard},
		[]probe.Site{s, s2}, func(ev *probe.Event) { evs = append(evs, *ev) })
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("exit %d, %v", res.ExitCode, err)
	}
	if len(evs) != 1 {
		t.Fatalf("%d events, want 1 (the condition reading PROT_NONE is false): %+v", len(evs), evs)
	}
	a := evs[0].Args
	if len(a) != 4 || !a[0].Err || !a[1].Err || a[2].Err || a[3].Err || a[3].Str != "secret" {
		t.Fatalf("args %+v: want faults for the PROT_NONE page, values for its copy", a)
	}
}
