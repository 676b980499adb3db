//go:build linux && amd64

package ptrace

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/utap/utap/internal/pad"
	"github.com/utap/utap/probe"
)

// drainEvery is how often the drainer reads the rings: at 0.2 µs an event,
// a default ring (131072 records) fills in no less than 26 ms.
const drainEvery = time.Millisecond

// drainBatch bounds the records read under one hold of the lock the loop
// shares: a millisecond's worth.
const drainBatch = 1024

func newPads(tr *tracer, off bool, verbose func(string), emit func(*probe.Event)) *pads {
	return &pads{tr: tr, off: off, rings: map[int]*padRing{}, verbose: verbose, emit: emit}
}

// start runs the drainer once the first ring exists: events flow while
// the loop sleeps in wait4.
func (ps *pads) start() {
	if ps.stop != nil {
		return
	}
	ps.clock = pad.NewClock()
	ps.stop, ps.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ps.done)
		// At the tracees' priority, not above: ahead of them it took
		// the CPU from them and from the loop, whose stops (a thread's
		// start) they wait for. A ring full blocks no one: its pad drops.
		wait := drainEvery
		for {
			select {
			case <-ps.stop:
				return
			case <-time.After(wait):
			}
			n := 0
			ps.mu.Lock()
			if !ps.held.Load() {
				ps.clock.Update()
				n = ps.drainSome(drainBatch)
			}
			ps.mu.Unlock()
			// While records flow, read again at once; the lock is
			// released between batches, for the loop (a thread's first
			// stop, a hit's events) to take it.
			switch {
			case n == 0:
				wait = drainEvery
			case n < drainBatch/4:
				wait = drainEvery / 10
			default:
				wait = drainEvery / 20
			}
		}
	}()
}

// halt stops the drainer; the loop drains the rest itself.
func (ps *pads) halt() {
	if ps.stop != nil {
		close(ps.stop)
		<-ps.done
		ps.stop = nil
	}
}

// drainSome drains at most max records of each ring, and returns the
// records read.
func (ps *pads) drainSome(max int) int {
	ps.fsTakeIn()
	n := 0
	for _, r := range ps.rings {
		n += r.r.DrainMax(max, func(rec *pad.Record) { ps.record(r, rec) })
	}
	return n
}

// drainAll turns every committed record into its event and emits it,
// and returns the records read.
func (ps *pads) drainAll() int {
	ps.fsTakeIn()
	n := 0
	for _, r := range ps.rings {
		n += r.r.Drain(func(rec *pad.Record) { ps.record(r, rec) })
	}
	return n
}

// record emits the event of one record.
func (ps *pads) record(r *padRing, rec *pad.Record) {
	if int(rec.Site) >= len(ps.ids) || ps.emit == nil || ps.mute.Load() {
		return
	}
	pid, tid := r.pid, 0
	if len(r.vforks) > 0 {
		if w := r.vforkOf(rec); w != nil {
			if !w.report {
				return // a vfork child not followed: not the parent's call
			}
			pid, tid = w.pid, w.pid
		}
	}
	if ps.tally {
		ps.count(rec.Site, 1)
		return
	}
	site := ps.ids[rec.Site]
	sp := site.sp
	// Consecutive records mostly come from one thread: the last answer
	// saves a map lookup.
	if tid == 0 && (!r.lastOK || rec.FS != r.lastFS) {
		t := r.pid // a thread whose fs base utap did not see (set by arch_prctl since)
		o := r.fs.owner(rec.FS, rec.Index)
		if o != nil {
			t = o.tid
		}
		// Only the newest owner holds for the records after this one.
		r.lastFS, r.lastTID, r.lastOK = rec.FS, t, o == nil || o == r.fs[rec.FS]
	}
	if tid == 0 {
		tid = r.lastTID
	}
	s := sp.site
	// Events and their values come from slabs: the drainer makes
	// millions of them, an allocation each would be most of its cost.
	if len(ps.slab) == 0 {
		ps.slab = make([]padEvent, 256)
	}
	pe := &ps.slab[0]
	ps.slab = ps.slab[1:]
	// Each drain refines the clock's rate: a record converted after it
	// must not come out earlier than the one before.
	ns := max(ps.clock.Nanos(rec.TSC), r.lastNs)
	r.lastNs = ns
	pe.ev = probe.Event{
		TimeNs: ns, PID: pid, TID: tid,
		Probe: s.Spec.Text, Func: s.Func, Kind: "entry", ProbeIndex: s.Probe,
	}
	if len(sp.fetches) > 0 {
		pe.ev.Args = pe.args[:len(sp.fetches)]
		for i, f := range sp.fetches {
			pe.args[i] = f.Value(rec.Vals[i])
		}
	}
	ps.emit(&pe.ev)
}

// count adds n to site id's tally.
func (ps *pads) count(id uint32, n uint64) {
	for int(id) >= len(ps.counts) {
		ps.counts = append(ps.counts, 0)
	}
	ps.counts[id] += n
}

// padEvent is an event with room for its values.
type padEvent struct {
	ev   probe.Event
	args [pad.MaxValues]probe.Value
}

// tallies are the counts of a Tally trace, per site.
func (ps *pads) tallies() []probe.Tally {
	var out []probe.Tally
	for id, n := range ps.counts {
		if n == 0 {
			continue
		}
		s := ps.ids[id].sp.site
		out = append(out, probe.Tally{Probe: s.Spec.Text, Func: s.Func, Kind: probe.Entry, Hits: n})
	}
	return out
}

// drainUntil drains the records made before CLOCK_MONOTONIC time ns.
func (ps *pads) drainUntil(ns int64) {
	if ps.clock == nil {
		return
	}
	limit := ps.clock.TSC(ns)
	ps.fsTakeIn()
	for _, r := range ps.rings {
		r.r.DrainBefore(limit, func(rec *pad.Record) { ps.record(r, rec) })
	}
}

// drainLocked is drainAll for the loop's goroutine, under mu.
func (pd *pads) drainLocked() {
	if pd != nil && pd.clock != nil {
		pd.drainAll()
	}
}

// ringGone drains p's ring a last time, counts its drops, and unmaps the
// tracer's view (the process's own mapping goes with it, or by munmap).
func (pd *pads) ringGone(p *process) {
	if p.pads == nil || p.pads.ring == nil {
		return
	}
	r := p.pads.ring
	p.pads.ring = nil
	if r.view == nil {
		return // a fork child's copy of its parent's
	}
	pd.mu.Lock()
	if pd.rings[r.pid] == r {
		pd.drainAll()
		r.r.DrainLast(func(rec *pad.Record) { pd.record(r, rec) })
		delete(pd.rings, r.pid)
		if pd.tally {
			for id := range min(len(pd.ids), pad.MaxCounted) {
				pd.count(uint32(id), r.r.Count(id))
			}
		}
	}
	pd.lost += r.r.Drops()
	r.gone = true
	pd.mu.Unlock()
	unix.Munmap(r.view)
}
