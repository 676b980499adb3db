//go:build linux && amd64

package ptrace

import (
	"context"
	"io"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/utap/utap/internal/agg"
	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/probe"
)

// aggMerge merges what a trace of `work => hist(arg1) by arg2` emitted:
// the tables' Kind "agg" events and the records' entry events, by key.
func aggMerge(t testing.TB, k agg.Kind, evs []*probe.Event) (map[uint64]*agg.State, int) {
	got := map[uint64]*agg.State{}
	st := func(key uint64) *agg.State {
		if got[key] == nil {
			got[key] = &agg.State{}
		}
		return got[key]
	}
	records := 0
	for _, e := range evs {
		switch e.Kind {
		case "agg":
			if e.Agg == nil || len(e.Agg.Key) != 1 || e.Func != "work" {
				t.Fatalf("agg event %+v", e)
			}
			st(e.Agg.Key[0].Int).Merge(e.Agg.State)
		case "entry":
			records++
			k.Add(st(e.Args[1].Int), int64(e.Args[0].Int))
		}
	}
	return got, records
}

// Four threads race for their keys' slots while the tables are read
// every millisecond: in a table of two slots two keys find one and the
// others write records; in a full-size one all four are in memory.
// Either way the totals are what the calls were, exactly.
func TestPadAggregateThreads(t *testing.T) {
	need.Root(t)
	defer func(n int) { aggSlots = n }(aggSlots)
	bin := fixture.C(t, "pt_count.c")
	site := specSite(t, bin, "work", "work => hist(arg1) by arg2")
	for _, c := range []struct {
		slots, n  int
		inRecords int // keys whose calls are records
	}{{2, 100000, 2}, {4096, 1000000, 0}} {
		t.Run(strconv.Itoa(c.slots), func(t *testing.T) {
			aggSlots = c.slots
			target := probe.Target{Argv: []string{bin, "4", strconv.Itoa(c.n)}, Aggregate: true, AggEvery: time.Millisecond}
			evs, out, res, st := padRun(t, false, target, []probe.Site{site})
			if res.ExitCode != 0 || st.pads != 1 || res.Lost != 0 {
				t.Fatalf("exit %d, output %q, pads %d, lost %d", res.ExitCode, out, st.pads, res.Lost)
			}
			kind := site.Spec.Agg.Kind
			got, records := aggMerge(t, kind, evs)
			t.Logf("%d events, %d of them records", len(evs), records)
			// A call that finds a slot being claimed writes its record too.
			if records < c.inRecords*c.n || records >= c.inRecords*c.n+c.n/2 {
				t.Errorf("%d records, want about %d", records, c.inRecords*c.n)
			}
			var want agg.State
			for i := range c.n {
				kind.Add(&want, int64(i))
			}
			if len(got) != 4 {
				t.Fatalf("%d keys, want 4", len(got))
			}
			for key, g := range got {
				if g.Count != want.Count || !slices.Equal(g.Buckets, want.Buckets) {
					t.Errorf("thread %d: %+v, want %+v", key, *g, want)
				}
			}
		})
	}
}

// traceAgg traces bin's n calls of work aggregated by site, and returns
// its time and the calls the merged map counts.
func traceAgg(b *testing.B, bin string, site probe.Site, n int) (time.Duration, uint64) {
	var evs []*probe.Event
	start := time.Now()
	_, err := (&Engine{}).Trace(context.Background(),
		probe.Target{Argv: []string{bin, "1", strconv.Itoa(n)}, Stdout: io.Discard, Aggregate: true},
		[]probe.Site{site}, func(e *probe.Event) { evs = append(evs, e) })
	if err != nil {
		b.Fatal(err)
	}
	d := time.Since(start)
	got, _ := aggMerge(b, site.Spec.Agg.Kind, evs)
	var calls uint64
	for _, s := range got {
		calls += s.Count
	}
	return d, calls
}

// BenchmarkPadAggregate: `work => hist(arg1) by arg2` in a pad, which
// adds each call to its key's slot in memory: µs per call, beside
// BenchmarkPadCount's counter (the target is 0.05).
func BenchmarkPadAggregate(b *testing.B) {
	need.Root(b)
	bin := fixture.C(b, "pt_count.c")
	site := specSite(b, bin, "work", "work => hist(arg1) by arg2")
	const n1, n2 = 100000, 2000000
	var us float64
	for range b.N {
		t1, c1 := traceAgg(b, bin, site, n1)
		t2, c2 := traceAgg(b, bin, site, n2)
		if c1 != n1 || c2 != n2 {
			b.Fatalf("calls %d, %d; want %d, %d", c1, c2, n1, n2)
		}
		us += float64(t2-t1) / float64(n2-n1) / 1e3
	}
	b.ReportMetric(us/float64(b.N), "µs/call")
}
