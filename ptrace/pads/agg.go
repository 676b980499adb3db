package pads

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/utap/utap/internal/agg"
	"github.com/utap/utap/internal/pad"
	"github.com/utap/utap/probe"
)

// The pads' aggregation tables (internal/pad/agg.go), read by the
// drainer: the differences since the last read while the process runs
// (every AggEvery), the rest once its ring is gone (the pads out or the
// process gone: exact totals). Events of Kind "agg", emitted under mu as
// every other.

// AggTable is one spec's table in every ring's memory.
type AggTable struct {
	Probe int // the spec's index
	Agg   *probe.Agg
	T     pad.AggTable
}

// aggs is the drainer's side of the tables.
type aggs struct {
	tables []AggTable
	rings  map[*Ring]*ringAggs
	stop   chan struct{}
	done   chan struct{}
	// hits, fell: the calls the tables took and those that found no
	// slot (records), in rings gone.
	hits, fell uint64
}

// ringAggs is what was emitted of one ring's tables.
type ringAggs struct {
	last   []map[int]agg.State // per table, by slot: the totals emitted
	unread []uint64            // per table
	comm   string              // the process's name when the ring was made
}

// Aggregate makes the drainer read tables in every ring's memory, after
// the ring (pad.Size), every `every` too when not 0.
func (d *Drainer) Aggregate(tables []AggTable, every time.Duration) {
	if len(tables) == 0 {
		return
	}
	a := &aggs{tables: tables, rings: map[*Ring]*ringAggs{}}
	d.mu.Lock()
	d.agg = a
	d.mu.Unlock()
	if every <= 0 {
		return
	}
	a.stop, a.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(a.done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-a.stop:
				return
			case <-tick.C:
			}
			d.mu.Lock()
			for _, r := range d.rings {
				d.aggFlush(r)
			}
			d.mu.Unlock()
		}
	}()
}

// aggHalt stops the periodic reads; not under mu.
func (d *Drainer) aggHalt() {
	d.mu.Lock()
	a := d.agg
	d.mu.Unlock()
	if a != nil && a.stop != nil {
		close(a.stop)
		<-a.done
		a.stop = nil
	}
}

// aggMute emits what the tables hold before the drainer mutes: the
// trace is over, what was aggregated so far is the trace's.
func (d *Drainer) aggMute() {
	if d.mute.Load() {
		return
	}
	d.mu.Lock()
	for _, r := range d.rings {
		d.aggFlush(r)
	}
	d.mu.Unlock()
}

// AggTotals are the calls the tables took, and those that wrote records
// for want of a slot, in the rings gone.
func (d *Drainer) AggTotals() (hits, fell uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.agg == nil {
		return 0, 0
	}
	return d.agg.hits, d.agg.fell
}

// aggRing is r's record of what was emitted, made at its first read.
func (a *aggs) aggRing(r *Ring) *ringAggs {
	ra := a.rings[r]
	if ra == nil {
		ra = &ringAggs{last: make([]map[int]agg.State, len(a.tables)), unread: make([]uint64, len(a.tables))}
		for i := range ra.last {
			ra.last[i] = map[int]agg.State{}
		}
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(r.Pid) + "/comm"); err == nil {
			ra.comm = strings.TrimSuffix(string(b), "\n")
		}
		a.rings[r] = ra
	}
	return ra
}

// aggAdded notes r's process's name while it runs (a comm key).
func (d *Drainer) aggAdded(r *Ring) {
	if d.agg != nil && r.view != nil {
		d.agg.aggRing(r)
	}
}

// aggGone reads r's tables a last time, under mu: its pads are out.
func (d *Drainer) aggGone(r *Ring) {
	a := d.agg
	if a == nil || r.view == nil {
		return
	}
	d.aggFlush(r)
	area := r.view[pad.Size(r.N):]
	for _, tb := range a.tables {
		a.fell += tb.T.Header(area, pad.AggFallbacks)
		tb.T.ReadAgg(area, func(s *pad.AggSlot) { a.hits += s.State.Count })
	}
	delete(a.rings, r)
}

// aggFlush emits what r's tables took since the last read, under mu. A
// slot is emitted only when its count moved: the pads add the count
// last, so a read may see a value whose count it does not, and such a
// part waits for its count (ReadAgg).
func (d *Drainer) aggFlush(r *Ring) {
	a := d.agg
	if a == nil || r.view == nil || r.gone || d.emit == nil || d.mute.Load() {
		return
	}
	ra := a.aggRing(r)
	area := r.view[pad.Size(r.N):]
	for i, tb := range a.tables {
		if u := tb.T.Header(area, pad.AggUnreadable); u != ra.unread[i] {
			d.aggEmit(r, ra, tb, nil, &probe.AggDelta{Unreadable: u - ra.unread[i]})
			ra.unread[i] = u
		}
		tb.T.ReadAgg(area, func(s *pad.AggSlot) {
			last := ra.last[i][s.Index]
			if s.State.Count == last.Count {
				return
			}
			delta := s.State
			delta.Count -= last.Count
			delta.Sum -= last.Sum
			delta.Buckets = slices.Clone(s.State.Buckets)
			for b, c := range last.Buckets {
				delta.Buckets[b] -= c
			}
			ra.last[i][s.Index] = s.State
			d.aggEmit(r, ra, tb, s, &probe.AggDelta{State: delta})
		})
	}
}

// aggEmit emits one key's delta of table tb (s nil: only unreadable
// values, no key).
func (d *Drainer) aggEmit(r *Ring, ra *ringAggs, tb AggTable, s *pad.AggSlot, delta *probe.AggDelta) {
	ev := &probe.Event{PID: r.Pid, TID: r.Pid, Kind: "agg", ProbeIndex: tb.Probe, Agg: delta}
	if s == nil {
		d.emit(ev)
		return
	}
	if int(s.Site) >= len(d.sites) {
		return
	}
	site := d.sites[s.Site]
	ev.Probe, ev.Func = site.Probe, site.Func
	j := 0
	for _, k := range tb.Agg.Keys {
		var v probe.Value
		switch k.Kind {
		case probe.KeyExpr:
			v = site.Fetches[k.Fetch].Value(s.Keys[j])
			j++
		case probe.KeyPID, probe.KeyTID:
			v = probe.Value{Int: uint64(r.Pid)}
		case probe.KeyComm:
			v = probe.Value{Int: uint64(r.Pid)}
			if ra.comm != "" {
				v = probe.Value{Str: ra.comm, IsStr: true}
			}
		case probe.KeyFunc:
			v = probe.Value{Str: site.Func, IsStr: true}
		}
		delta.Key = append(delta.Key, v)
	}
	d.emit(ev)
}
