package pads

import (
	"math"
	"slices"

	"github.com/utap/utap/probe"
)

// later is a stop's events waiting for the records made before the stop.
// A ring shared by threads is read in reservation order, so one thread's
// record still being written (its thread preempted between reserving
// and committing) keeps the stopped thread's records behind it unread;
// the events wait for them rather than pass them, and the loop goes on.
type later struct {
	marks []ringMark // each ring's reservation index at the stop
	ns    int64      // rings made since: records stamped before ns
	evs   []*probe.Event
}

// Release emits the records made before the stop held (Hold), then the
// loop's events evs, in order, and lets the drainer go on. ns is the
// stop's CLOCK_MONOTONIC time, for rings made since the Hold;
// math.MaxInt64 (a thread's end) waits for every record reserved by now.
// Events whose records are not all written yet are emitted by the
// drainer once they are: the loop does not wait.
func (d *Drainer) Release(ns int64, evs []*probe.Event) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.held.Store(false)
	if ns == math.MaxInt64 {
		d.marks = d.marks[:0]
		for _, r := range d.rings {
			d.marks = append(d.marks, ringMark{r, r.r.Reserved()})
		}
	}
	b := later{marks: d.marks, ns: ns, evs: evs}
	if len(d.later) == 0 && d.drainTo(&b, nil) {
		d.marks = d.marks[:0]
		d.emitAll(evs)
		return
	}
	b.marks, b.evs = slices.Clone(d.marks), slices.Clone(evs)
	d.marks = d.marks[:0]
	d.later = append(d.later, b)
	if d.catchUp(nil, false) {
		return
	}
	d.wake() // a sleeping drainer polls while events wait
}

// catchUp emits the waiting stops' events whose records are all read, in
// order; true when none waits. gone: a ring whose producers are all
// gone, read past what they never wrote. force: every batch goes (a
// ring is gone, or the trace is over), its records read as far as they
// are written.
func (d *Drainer) catchUp(gone *Ring, force bool) bool {
	for len(d.later) > 0 {
		b := &d.later[0]
		if !d.drainTo(b, gone) && !force {
			return false
		}
		d.emitAll(b.evs)
		d.later[0] = later{}
		d.later = d.later[1:]
	}
	d.later = nil
	return true
}

// drainTo drains each ring up to b's mark, a ring made since up to b's
// time; true when every marked ring was read to its mark.
func (d *Drainer) drainTo(b *later, gone *Ring) bool {
	if d.clock == nil {
		return true
	}
	d.takeIn()
	done := true
	for _, r := range d.rings {
		at, marked := uint64(0), false
		for _, m := range b.marks {
			if m.r == r {
				at, marked = m.at, true
			}
		}
		switch {
		case !marked:
			limit := ^uint64(0)
			if b.ns != math.MaxInt64 {
				limit = d.clock.TSC(b.ns)
			}
			r.r.DrainBeforeUpTo(limit, r.head, r.records(d))
		case r == gone:
			r.r.DrainLastUpTo(at, r.records(d))
		default:
			r.r.DrainUpTo(at, r.records(d))
			done = done && r.r.Tail() >= at
		}
	}
	return done
}

// emitAll emits the loop's events.
func (d *Drainer) emitAll(evs []*probe.Event) {
	for _, ev := range evs {
		d.emit(ev)
	}
}
