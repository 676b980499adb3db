package pads

import (
	"slices"

	"github.com/utap/utap/internal/pad"
	"github.com/utap/utap/internal/summary"
	"github.com/utap/utap/probe"
)

// timedTally is what the return pads of a counting trace added to one
// site's tally blocks (pad.Tally), over every ring gone, in TSC ticks.
type timedTally struct {
	hits, errors, sum uint64
	min, max          uint64
	buckets           [pad.TallyBuckets]uint64
}

// addTimed adds a ring's tally block of return site id.
func (d *Drainer) addTimed(id uint32, t pad.Tally) {
	if t.Hits == 0 {
		return
	}
	if d.timed == nil {
		d.timed = map[uint32]*timedTally{}
	}
	tt := d.timed[id]
	if tt == nil {
		tt = &timedTally{min: t.Min}
		d.timed[id] = tt
	}
	tt.hits += t.Hits
	tt.errors += t.Errors
	tt.sum += t.Sum
	tt.min = min(tt.min, t.Min)
	tt.max = max(tt.max, t.Max)
	for i, c := range t.Buckets {
		tt.buckets[i] += c
	}
}

// timedTallies are the return sites' tallies, durations in nanoseconds
// at the TSC rate measured over the trace: sum, minimum and maximum
// exact; each tick bucket's calls counted at its middle (a bucket is
// 12.5% wide, so a quantile is within about 6%).
func (d *Drainer) timedTallies() []probe.Tally {
	ids := make([]uint32, 0, len(d.timed))
	for id := range d.timed {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	rate := 1.0
	if d.clock != nil {
		d.clock.Update()
		rate = d.clock.Rate()
	}
	ns := func(ticks uint64) uint64 { return uint64(float64(ticks) * rate) }
	var out []probe.Tally
	for _, id := range ids {
		tt, s := d.timed[id], d.sites[id]
		t := probe.Tally{
			Probe: s.Probe, Func: s.Func, Kind: probe.Return, Hits: tt.hits, Errors: tt.errors,
			Durations: map[int]uint64{}, DurationSum: ns(tt.sum), DurationMin: ns(tt.min), DurationMax: ns(tt.max),
		}
		for i, c := range tt.buckets {
			if c == 0 {
				continue
			}
			low, width := pad.TallyBounds(i)
			mid := min(max(ns(low+width/2), t.DurationMin), t.DurationMax)
			t.Durations[summary.Bucket(mid)] += c
		}
		out = append(out, t)
	}
	return out
}
