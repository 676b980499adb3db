//go:build linux && amd64

package ptrace

import (
	"testing"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/probe"
)

// g jumps to f+3, after f's first instruction (as glibc's __mempcpy_*
// jump into __memmove_*): f's entry keeps its int3, since a jump there
// would cut the instruction g lands on, and the program runs as untraced.
// On bb21bac the pad went in and the program died of SIGSEGV.
func TestPadNotOverLanding(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "pt_tailjump.S", "-g")
	for _, noPads := range []bool{false, true} {
		sites := []probe.Site{siteAt(t, bin, "f", 0)}
		evs, out, res, st := padRun(t, noPads, probe.Target{Argv: []string{bin}, Tally: true}, sites)
		if res.ExitCode != 0 || out != "sum=1103000\n" {
			t.Fatalf("noPads=%v: exit %d, output %q", noPads, res.ExitCode, out)
		}
		if st.pads != 0 {
			t.Fatalf("noPads=%v: f got a pad over the landing at f+3", noPads)
		}
		hits := uint64(len(evs)) // a breakpoint's calls come as events
		for _, ty := range res.Tallies {
			hits += ty.Hits
		}
		if hits != 1000 {
			t.Fatalf("noPads=%v: %d events, tallies %+v; want 1000 calls", noPads, len(evs), res.Tallies)
		}
	}
}
