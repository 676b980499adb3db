//go:build linux && amd64

package ptrace

import (
	"testing"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/probe"
)

// TestPadReadFixup: a pad's reads are plain loads while the tracer lives;
// a bad pointer faults and the tracer sends the thread to the load's
// fix-up (the value unreadable, the program unharmed), once: the site's
// reads go through system calls after its first fault. The values are
// the breakpoints' (--no-pads).
func TestPadReadFixup(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "pad_strs.c")
	sites := []probe.Site{specSite(t, bin, "show", "show(str(arg1), *(int*)arg2)")}
	target := probe.Target{Argv: []string{bin}}
	pe, pout, pres, st := padRun(t, false, target, sites)
	be, bout, _, _ := padRun(t, true, target, sites)
	if st.pads != 1 || pout != "94\n" || bout != pout || pres.ExitCode != 0 {
		t.Fatalf("pads %d, output %q (breakpoints %q), exit %d", st.pads, pout, bout, pres.ExitCode)
	}
	// The first hit with a bad pointer faults (both its reads may), then
	// the site reads by system calls.
	if st.padFixups < 1 || st.padFixups > 2 {
		t.Fatalf("%d fix-ups, want 1 or 2", st.padFixups)
	}
	if len(pe) != len(be) {
		t.Fatalf("%d events with pads, %d with breakpoints", len(pe), len(be))
	}
	for i := range pe {
		for j := range pe[i].Args {
			if pe[i].Args[j] != be[i].Args[j] {
				t.Fatalf("event %d value %d: pads %+v, breakpoints %+v", i, j, pe[i].Args[j], be[i].Args[j])
			}
		}
	}
}
