//go:build linux && amd64

package ptrace

import (
	"os/exec"
	"testing"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/probe"
)

func TestGoProgramExactCounts(t *testing.T) {
	need.Root(t)
	bin := fixture.Go(t, "pt_go")
	want, err := exec.Command(bin, "16", "2000").Output()
	if err != nil {
		t.Fatal(err)
	}
	// +6: after the stack-bound check. A call that grows (or is preempted
	// through) the stack runs the check again after morestack, so a probe
	// at +0 fires twice for it: Go's own semantics, not a lost trap.
	s := siteAt(t, bin, "main.work", 6, argFetch(1), argFetch(2))
	s.ABI = probe.ABIGoRegs
	s.GoFunc = true
	evs, out, res := run(t, false, []probe.Site{s}, bin, "16", "2000")
	if out != string(want) || res.ExitCode != 0 {
		t.Fatalf("exit %d, output %q, want %q", res.ExitCode, out, want)
	}
	if len(evs) != 16*2000 {
		t.Fatalf("%d events, want %d", len(evs), 16*2000)
	}
	var sum uint64
	tids := map[int]bool{}
	for _, e := range evs {
		sum += e.Args[0].Int + e.Args[1].Int
		tids[e.TID] = true
	}
	if want := uint64(16*(2000*1999/2) + 2000*(15*16/2)); sum != want {
		t.Fatalf("sum of args %d, want %d", sum, want)
	}
	t.Logf("%d events over %d threads", len(evs), len(tids))
}
