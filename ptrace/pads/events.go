package pads

import (
	"unsafe"

	"github.com/utap/utap/internal/pad"
	"github.com/utap/utap/probe"
)

// events makes the drainer's events and hands them to emit.
//
// Calls in one emit (probe.Target.Pairs): a function with a return probe
// writes two records per call, its entry's and its return's, mostly one
// right after the other. The entry's event waits for the next record of
// the ring; the same thread's return of the same function makes the two
// one event (probe.Event.Return): the emit chain runs once per call,
// and the text writer writes the line without keeping the entry open
// (5–10% of the tracer's time per call, docs/benchmarks.md). The drain
// that read the entry ends by emitting it (end) if nothing came, so the
// loop's events keep their place.
type events struct {
	emit func(*probe.Event)
	// borrow: emit keeps no event (probe.Target.Borrow): two are reused,
	// one of which may be open; else they come from slabs: the drainer
	// makes millions, an allocation each would be most of its cost.
	borrow bool
	one    [2]padEvent
	slab   []padEvent
	pairs  bool      // probe.Target.Pairs
	open   *padEvent // the entry waiting for the next record
	// strs: the chunk strings are copied into (str).
	strs []byte
	// calls: calls without events (calls.go), probe.Target.Calls; held
	// the entry kept; c and its values the Call written.
	calls       probe.CallWriter
	forms       probe.CallForms // calls, when it takes calls' numbers alone
	run         formRun
	timed       bool     // calls.Timed()
	d           *Drainer // makes a kept entry's event (unhold)
	held        heldCall
	c           probe.Call
	cArgs, cOut callValues
	// lines: told of each drain's events (probe.Target.Lines), held
	// from a drain's first record to its end.
	lines   probe.Batcher
	holding bool
}

// padEvent is an event with room for its values.
type padEvent struct {
	ev   probe.Event
	args [pad.MaxValues + pad.MaxExtra]probe.Value
	ret  probe.Value
	sys  probe.Syscall // a system call pad's (sys.go)
}

// next is a cleared event to fill.
func (e *events) next() *padEvent {
	var pe *padEvent
	switch {
	case e.borrow && e.open == &e.one[0]:
		pe = &e.one[1]
	case e.borrow:
		pe = &e.one[0]
	default:
		if len(e.slab) == 0 {
			e.slab = make([]padEvent, 256)
		}
		pe = &e.slab[0]
		e.slab = e.slab[1:]
	}
	resetEvent(&pe.ev)
	return pe
}

// resetEvent clears what a reused event may hold, field by field: a
// composite literal built the whole event aside and copied it, a sixth
// of the drainer's time.
func resetEvent(ev *probe.Event) {
	ev.Args, ev.Ret, ev.DurationNs, ev.Stack = nil, nil, 0, nil
	ev.Sys, ev.Signal, ev.Status, ev.Caller, ev.Agg, ev.Return = nil, nil, 0, 0, nil, nil
}

// out emits ev, after the calls of the run before it (formRun): every
// event of the drain goes out through it, so a run is flushed before
// whatever comes after its calls.
func (e *events) out(ev *probe.Event) {
	e.run.flush()
	e.emit(ev)
}

// callOut hands c to the CallWriter, after the calls of the run before
// it (out).
func (e *events) callOut(c *probe.Call) bool {
	e.run.flush()
	return e.calls.Call(c)
}

// put emits pe, or, pairing, holds an entry until the next record.
func (e *events) put(pe *padEvent) {
	if o := e.open; o != nil {
		e.open = nil
		if pe.ev.Kind == "return" && pe.ev.Sys == nil && pe.ev.PID == o.ev.PID && pe.ev.TID == o.ev.TID && pe.ev.Func == o.ev.Func {
			o.ev.Return = &pe.ev
			e.out(&o.ev)
			return
		}
		e.out(&o.ev)
	}
	if e.pairs && pe.ev.Kind == "entry" && pe.ev.Sys == nil {
		e.open = pe
		return
	}
	e.out(&pe.ev)
}

// end emits the entry held, if any: a drain is over, its records' room
// not given back yet (pad.Ring.SetDrained): a held entry's strings are
// read in place.
func (e *events) end() {
	e.run.flush()
	e.unhold(e.d)
	if o := e.open; o != nil {
		e.open = nil
		e.out(&o.ev)
	}
	if e.holding {
		e.holding = false
		e.lines.Release() // before the tail the waiting pads watch
	}
}

// strChunk is the bytes of one chunk of strings.
const strChunk = 64 << 10

// str is b as a string, copied into the current chunk of strings: one
// allocation per 64 KiB of them instead of one per string (a str() fetch
// on every call made the allocations and their collection a tenth of the
// drainer's time). A chunk's bytes are never written again once a string
// holds them; the chunk lives while any of its strings does, so a
// consumer keeping strings for long (an aggregation's keys) clones them.
func (e *events) str(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(e.strs)+len(b) > cap(e.strs) {
		e.strs = make([]byte, 0, max(strChunk, len(b)))
	}
	at := len(e.strs)
	e.strs = append(e.strs, b...)
	return unsafe.String(&e.strs[at], len(b))
}

// records is what a drain of r calls per record; ev.end follows the
// drain.
func (r *Ring) records(d *Drainer) func(*pad.Record) {
	return func(rec *pad.Record) { d.record(r, rec) }
}
