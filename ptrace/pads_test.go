//go:build linux && amd64

package ptrace

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"runtime/debug"
	"testing"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/probe"
)

// padRun traces argv with sites, pads on or off, and returns the events,
// the output, the result and what the trace cost.
func padRun(t *testing.T, noPads bool, target probe.Target, sites []probe.Site) ([]*probe.Event, string, probe.Result, runStats) {
	t.Helper()
	return padRunWith(t, &Engine{NoPads: noPads}, target, sites)
}

// padRunWith is padRun with the engine e.
func padRunWith(t *testing.T, e *Engine, target probe.Target, sites []probe.Site) ([]*probe.Event, string, probe.Result, runStats) {
	t.Helper()
	var evs []*probe.Event
	out, res, st := padRunWithEmit(t, e, target, sites, func(e *probe.Event) { evs = append(evs, e) })
	return evs, out, res, st
}

// padRunWithEmit is padRunWith with the events given to emit.
func padRunWithEmit(t *testing.T, e *Engine, target probe.Target, sites []probe.Site, emit func(*probe.Event)) (string, probe.Result, runStats) {
	t.Helper()
	var out bytes.Buffer
	var st runStats
	target.Stdout = &out
	e.stats, e.Verbose = &st, func(s string) { t.Log(s) }
	res, err := e.Trace(context.Background(), target, sites, emit)
	if err != nil {
		t.Fatalf("Trace: %v", err)
	}
	return out.String(), res, st
}

// The same events with pads as with breakpoints: arguments, order, tids.
func TestPadEventsAsBreakpoints(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "pt_count.c")
	sites := []probe.Site{siteAt(t, bin, "work", 0, argFetch(1), argFetch(2))}
	target := probe.Target{Argv: []string{bin, "1", "20000"}}
	pe, pout, pres, st := padRun(t, false, target, sites)
	be, bout, bres, _ := padRun(t, true, target, sites)
	if st.pads != 1 || st.stops > 100 {
		t.Fatalf("pads %d, stops %d: the probe did not run in a pad", st.pads, st.stops)
	}
	if pout != bout || pres.ExitCode != bres.ExitCode || pres.Lost != 0 {
		t.Fatalf("pads: exit %d %q, lost %d; breakpoints: exit %d %q", pres.ExitCode, pout, pres.Lost, bres.ExitCode, bout)
	}
	if len(pe) != len(be) {
		t.Fatalf("%d events with pads, %d with breakpoints", len(pe), len(be))
	}
	for i := range pe {
		p, b := pe[i], be[i]
		if p.Args[0] != b.Args[0] || p.Args[1] != b.Args[1] || p.Func != b.Func || p.Kind != b.Kind ||
			p.PID == p.TID || p.Probe != b.Probe {
			t.Fatalf("event %d: pad %+v, breakpoint %+v", i, p, b)
		}
		if i > 0 && p.TimeNs < pe[i-1].TimeNs {
			t.Fatalf("event %d: time goes back: %d after %d", i, p.TimeNs, pe[i-1].TimeNs)
		}
	}
}

// A condition runs as native code in the pad: only calls it holds for
// make records.
func TestPadCondition(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "pt_count.c")
	s := specSite(t, bin, "work", "work(arg1, arg2) if arg1 % 7 == 3 && arg2 == 0")
	evs, _, res, st := padRun(t, false, probe.Target{Argv: []string{bin, "1", "70000"}}, []probe.Site{s})
	if st.pads != 1 || len(evs) != 10000 || res.Lost != 0 {
		t.Fatalf("pads %d: %d events, %d lost; want 10000", st.pads, len(evs), res.Lost)
	}
	for _, e := range evs {
		if e.Args[0].Int%7 != 3 {
			t.Fatalf("event for arg1 %d", e.Args[0].Int)
		}
	}
}

// 8 threads x 100k calls, counted (-c, --count-only): each pad adds to
// its site's counter, so the count is exact however fast calls come.
func TestPadExactCount8Threads(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "pt_count.c")
	sites := []probe.Site{siteAt(t, bin, "work", 0, argFetch(1), argFetch(2))}
	evs, out, res, st := padRun(t, false, probe.Target{Argv: []string{bin, "8", "100000"}, Tally: true}, sites)
	if res.ExitCode != 0 || out != "threads=8 iters=100000 total=40002400000\n" {
		t.Fatalf("exit %d, output %q", res.ExitCode, out)
	}
	if st.pads != 1 || len(evs) != 0 || len(res.Tallies) != 1 || res.Tallies[0].Hits != 800000 || res.Lost != 0 {
		t.Fatalf("pads %d, %d events, tallies %+v, lost %d", st.pads, len(evs), res.Tallies, res.Lost)
	}
}

// --lossy: events come faster than the tracer reads them, the ring
// drops and counts, the program runs as untraced, and read + lost is
// every call (however many the ring dropped, none if the tracer kept up).
func TestPadRingFullDrops(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "pt_count.c")
	sites := []probe.Site{siteAt(t, bin, "work", 0, argFetch(1), argFetch(2))}
	evs, out, res, st := padRunWith(t, &Engine{Lossy: true}, probe.Target{Argv: []string{bin, "4", "500000"}}, sites)
	if res.ExitCode != 0 || out != "threads=4 iters=500000 total=500002000000\n" {
		t.Fatalf("exit %d, output %q", res.ExitCode, out)
	}
	if uint64(len(evs))+res.Lost != 2000000 || st.padWaits != 0 {
		t.Fatalf("%d events + %d lost, want 2000000; %d waits", len(evs), res.Lost, st.padWaits)
	}
	t.Logf("%d events, %d dropped", len(evs), res.Lost)
}

// Signals land inside the pad, and their handler calls the probed
// function: every call of both is reported, once.
func TestPadSignalInPad(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "pt_padsig.c")
	sites := []probe.Site{siteAt(t, bin, "work", 0, argFetch(2))}
	evs, out, res, st := padRun(t, false, probe.Target{Argv: []string{bin, "40000"}}, sites)
	var main, handled int
	if _, err := fmt.Sscanf(out, "main %d sum 800020000 handler %d\n", &main, &handled); err != nil || res.ExitCode != 0 {
		t.Fatalf("exit %d, output %q", res.ExitCode, out)
	}
	n := map[uint64]int{}
	for _, e := range evs {
		n[e.Args[0].Int]++
	}
	if st.pads != 1 || n[1] != main || n[2] != handled || res.Lost != 0 {
		t.Fatalf("pads %d: %d main and %d handler events, want %d and %d (lost %d)", st.pads, n[1], n[2], main, handled, res.Lost)
	}
	t.Logf("%d handler calls", handled)
}

// fork, vfork, exec and threads with pads: a followed child's events carry
// its pid, its ring is its own; one not followed runs its code restored.
func TestPadLifecycle(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "pt_fork.c")
	for _, c := range []struct {
		mode   string
		follow bool
		pids   int // processes with events
	}{
		{"fork", false, 1}, {"fork", true, 2}, {"vfork", true, 2}, {"exec", false, 1}, {"clone", true, 1},
	} {
		t.Run(fmt.Sprintf("%s/follow=%v", c.mode, c.follow), func(t *testing.T) {
			want, err := exec.Command(bin, c.mode).Output()
			if err != nil {
				t.Fatal(err)
			}
			sites := []probe.Site{siteAt(t, bin, "work", 0, argFetch(2))}
			evs, out, res, st := padRun(t, false, probe.Target{Argv: []string{bin, c.mode}, Follow: c.follow}, sites)
			if out != string(want) || res.ExitCode != 0 || st.pads == 0 || res.Lost != 0 {
				t.Fatalf("exit %d, output %q, want %q; pads %d, lost %d", res.ExitCode, out, want, st.pads, res.Lost)
			}
			pids := map[int]bool{}
			for _, e := range evs {
				pids[e.PID] = true
				if e.Args[0].Int == 2 && e.PID == evs[0].PID {
					t.Errorf("the fork child's event carries the parent's pid: %+v", e)
				}
			}
			if len(pids) != c.pids {
				t.Errorf("events from %d processes, want %d", len(pids), c.pids)
			}
		})
	}
}

// BenchmarkPadHit: BenchmarkHit's entry probe fetching two arguments, run
// in a pad: µs per call with every event drained and made (the counts
// stay within one ring, so none drops).
func BenchmarkPadHit(b *testing.B) {
	benchPads = true
	// As the CLI's tracer runs (cmd/utap/main.go).
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	defer func() { benchPads = false }()
	benchCallsN(b, workSites(b, 0), 1, 10000, 60000)
}

// BenchmarkPadFalseCondition: BenchmarkFalseCondition's probe in a pad:
// the condition, native code, never holds.
func BenchmarkPadFalseCondition(b *testing.B) {
	benchPads = true
	defer func() { benchPads = false }()
	benchCallsN(b, []probe.Site{falseCondSite(b)}, 0, 100000, 2000000)
}

// BenchmarkPadCount: the pad of a counting trace (--count-only), which
// only adds to its site's counter: the cost of the hit alone.
func BenchmarkPadCount(b *testing.B) {
	benchPads, benchTally = true, true
	defer func() { benchPads, benchTally = false, false }()
	benchCallsN(b, workSites(b, 0), 0, 100000, 2000000)
}

// BenchmarkPadTimedCount: -c's pads, entry and return, which count each
// call and add its duration to the site's tally (per CPU by rseq where
// glibc registered it): no event leaves the process.
func BenchmarkPadTimedCount(b *testing.B) {
	benchPads, benchTally = true, true
	defer func() { benchPads, benchTally = false, false }()
	bin := fixture.C(b, "pt_count.c")
	benchCallsN(b, []probe.Site{siteAt(b, bin, "work", 0), retSite(b, bin, "work")}, 0, 100000, 2000000)
}
