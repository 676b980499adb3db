//go:build linux && amd64

package ptrace

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/probe"
)

// slowWakeups is the benchmarks' Engine.SlowWakeups.
var slowWakeups bool

// pads lets the benchmarks use in-process pads (pads_test.go's); the
// others measure breakpoints.
var benchPads bool

// benchTally runs the benchmarks' traces as counting ones (--count-only).
var benchTally bool

// traceOnce runs pt_count with one thread and n calls under the engine and
// returns the wall time, the number of events and of ptrace stops.
func traceOnce(b *testing.B, bin string, sites []probe.Site, n int) (time.Duration, int, runStats) {
	events := 0
	var st runStats
	start := time.Now()
	_, err := (&Engine{stats: &st, SlowWakeups: slowWakeups, NoPads: !benchPads}).Trace(context.Background(),
		// Borrow: the emit below keeps nothing, as the CLI's.
		probe.Target{Argv: []string{bin, "1", strconv.Itoa(n)}, Stdout: io.Discard, Tally: benchTally, Borrow: true},
		sites, func(*probe.Event) { events++ })
	if err != nil {
		b.Fatal(err)
	}
	return time.Since(start), events, st
}

// benchCalls reports µs and ptrace stops per call of work as the slope
// between two runs, so the fixed costs (fork, exec, install, exit) cancel
// out; perCall is the number of events each call must produce.
func benchCalls(b *testing.B, sites []probe.Site, perCall int) {
	benchCallsN(b, sites, perCall, 2000, 20000)
}

func benchCallsN(b *testing.B, sites []probe.Site, perCall, n1, n2 int) {
	need.Root(b)
	bin := fixture.C(b, "pt_count.c")
	var us, stops, polled float64
	for range b.N {
		t1, e1, s1 := traceOnce(b, bin, sites, n1)
		t2, e2, s2 := traceOnce(b, bin, sites, n2)
		if e1 != perCall*n1 || e2 != perCall*n2 {
			b.Fatalf("events %d, %d; want %d, %d", e1, e2, perCall*n1, perCall*n2)
		}
		us += float64(t2-t1) / float64(n2-n1) / 1e3
		stops += float64(s2.stops-s1.stops) / float64(n2-n1)
		polled += float64(s2.polled) / float64(s2.polled+s2.blocked)
	}
	b.ReportMetric(us/float64(b.N), "µs/call")
	b.ReportMetric(stops/float64(b.N), "stops/call")
	b.ReportMetric(polled/float64(b.N), "polled/stop")
}

// workSites is the entry probe work(arg1, arg2) and extra probes on the
// never-called f0, f1...
func workSites(b *testing.B, extra int) []probe.Site {
	bin := fixture.C(b, "pt_count.c")
	sites := []probe.Site{siteAt(b, bin, "work", 0, argFetch(1), argFetch(2))}
	for i := range extra {
		sites = append(sites, siteAt(b, bin, fmt.Sprintf("f%d", i), 0))
	}
	return sites
}

// BenchmarkHit: an entry probe fetching two arguments.
func BenchmarkHit(b *testing.B)           { benchCalls(b, workSites(b, 0), 1) }
func BenchmarkHit1000Probes(b *testing.B) { benchCalls(b, workSites(b, 999), 1) }

// BenchmarkHitSlowWakeups: idle CPUs left to halt (wakeup.go).
func BenchmarkHitSlowWakeups(b *testing.B) {
	slowWakeups = true
	defer func() { slowWakeups = false }()
	benchCalls(b, workSites(b, 0), 1)
}

// BenchmarkHitPinned pins tracer and tracee to CPU 0.
func BenchmarkHitPinned(b *testing.B) {
	pinCPU = 0
	defer func() { pinCPU = -1 }()
	benchCalls(b, workSites(b, 0), 1)
}

// BenchmarkFalseCondition: the probe traps but its condition never holds.
func BenchmarkFalseCondition(b *testing.B) {
	benchCalls(b, []probe.Site{falseCondSite(b)}, 0)
}

// falseCondSite is work's entry probed with a condition that never holds.
func falseCondSite(b *testing.B) probe.Site {
	return specSite(b, fixture.C(b, "pt_count.c"), "work", "work(arg1, arg2) if arg2 == 12345")
}

// BenchmarkEntryReturn: entry and return probes on the same function, the
// return by hijacking (two stops per call).
func BenchmarkEntryReturn(b *testing.B) {
	bin := fixture.C(b, "pt_count.c")
	sites := append(workSites(b, 0), retSite(b, bin, "work"))
	benchCalls(b, sites, 2)
}

// BenchmarkEntryReturnPinned is BenchmarkEntryReturn on one CPU.
func BenchmarkEntryReturnPinned(b *testing.B) {
	pinCPU = 0
	defer func() { pinCPU = -1 }()
	BenchmarkEntryReturn(b)
}

// BenchmarkEntryReturnRetProbes: the same with RET probes (as for Go, or
// with the CET shadow stack on).
func BenchmarkEntryReturnRetProbes(b *testing.B) {
	shadowStackEnabled = func(int) (bool, error) { return true, nil }
	defer func() { shadowStackEnabled = defaultShadowStackEnabled }()
	BenchmarkEntryReturn(b)
}

// BenchmarkHitNoSpin is BenchmarkHit with the loop blocking in wait4 at
// once (no polling after PTRACE_CONT).
func BenchmarkHitNoSpin(b *testing.B) {
	defer func(w int64) { spinWindow = w }(spinWindow)
	spinWindow = 0
	benchCalls(b, workSites(b, 0), 1)
}
