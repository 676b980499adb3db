//go:build linux && amd64

package ptrace

import (
	"strings"
	"testing"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/probe"
)

// TestPadHop: f, whose fourth byte g jumps to, and tiny, three bytes
// long, take pads by a hop through the padding before them; prev falls
// into f through that padding and is seen as f's call, as on breakpoints.
// The program's output and the calls are the same with pads as without.
func TestPadHop(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "pt_hop.c", "-O1")
	for _, noPads := range []bool{false, true} {
		sites := []probe.Site{siteAt(t, bin, "f", 0), siteAt(t, bin, "tiny", 0)}
		evs, out, res, st := padRun(t, noPads, probe.Target{Argv: []string{bin, "1000"}, Tally: true}, sites)
		if res.ExitCode != 0 || out != "sum=2604500\n" {
			t.Fatalf("noPads=%v: exit %d, output %q", noPads, res.ExitCode, out)
		}
		if want := map[bool]int{false: 2, true: 0}[noPads]; st.pads != want {
			t.Fatalf("noPads=%v: %d pads, want %d", noPads, st.pads, want)
		}
		hits := map[string]uint64{}
		for _, e := range evs {
			hits[e.Func]++
		}
		for _, ty := range res.Tallies {
			hits[ty.Func] += ty.Hits
		}
		if hits["f"] != 2000 || hits["tiny"] != 1000 {
			t.Fatalf("noPads=%v: calls %v; want f 2000 (1000 its own, 1000 prev's), tiny 1000", noPads, hits)
		}
	}
}

// TestPadHopDetach: attached to, the hops' jumps and the padding they
// took are as they were once detached, and the program runs on. The
// thread runs through f's padding (prev falls into f through it): caught
// there, inside the bytes the hop's jump takes, f keeps a breakpoint that
// time (said), so the attach is tried again until both get pads.
func TestPadHopDetach(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "pt_hop.c", "-O1")
	pid, _ := running(t, bin, "0")
	maps0, code0 := snapshot(t, pid)
	for try := 1; ; try++ {
		var st runStats
		var said []string
		e := &Engine{stats: &st, Verbose: func(s string) { said = append(said, s) }}
		attachFor(t, e, pid, []probe.Site{siteAt(t, bin, "f", 0), siteAt(t, bin, "tiny", 0)}, 3000, nil)
		restored(t, pid, maps0, code0)
		lines := strings.Join(said, "\n")
		switch {
		case st.pads == 2:
			return
		case st.pads == 1 && strings.Contains(lines, "inside the bytes the jump would take") && try < 50:
			continue
		}
		t.Fatalf("try %d: %d pads, want f's and tiny's:\n%s", try, st.pads, lines)
	}
}
