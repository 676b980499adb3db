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

// traceOnce runs pt_count with one thread and n calls under the engine and
// returns the wall time and the number of events.
func traceOnce(b *testing.B, bin string, sites []probe.Site, n int) (time.Duration, int) {
	events := 0
	start := time.Now()
	_, err := (&Engine{}).Trace(context.Background(), probe.Target{Argv: []string{bin, "1", strconv.Itoa(n)}, Stdout: io.Discard},
		sites, func(*probe.Event) { events++ })
	if err != nil {
		b.Fatal(err)
	}
	return time.Since(start), events
}

// benchHit reports µs per event as the slope between two runs, so the
// fixed costs (fork, exec, install, exit) cancel out.
func benchHit(b *testing.B, extra int) {
	need.Root(b)
	bin := fixture.C(b, "pt_count.c")
	sites := []probe.Site{siteAt(b, bin, "work", 0, argFetch(1), argFetch(2))}
	for i := range extra {
		sites = append(sites, siteAt(b, bin, fmt.Sprintf("f%d", i), 0))
	}
	const n1, n2 = 2000, 20000
	var total float64
	for range b.N {
		t1, e1 := traceOnce(b, bin, sites, n1)
		t2, e2 := traceOnce(b, bin, sites, n2)
		if e1 != n1 || e2 != n2 {
			b.Fatalf("events %d, %d; want %d, %d", e1, e2, n1, n2)
		}
		total += float64(t2-t1) / float64(n2-n1) / 1e3
	}
	b.ReportMetric(total/float64(b.N), "µs/event")
}

func BenchmarkHit(b *testing.B)           { benchHit(b, 0) }
func BenchmarkHit1000Probes(b *testing.B) { benchHit(b, 999) }

// BenchmarkHitPinned pins tracer and tracee to CPU 0.
func BenchmarkHitPinned(b *testing.B) {
	pinCPU = 0
	defer func() { pinCPU = -1 }()
	benchHit(b, 0)
}
