package main

import (
	"github.com/utap/utap/internal/output"
	"github.com/utap/utap/probe"
)

// callLane is the trace's probe.CallWriter: the calls an engine reads
// whole (the pads' entry and return) go straight to the text or JSON writer,
// without events, when no stage of the emit chain would change them:
// none but the typed return value's move (retTyped.call). The emit
// chain's other stages are per probe (variadic arguments, enumeration
// names: Takes says no) or for the whole trace (newCallLane gives none).
type callLane struct {
	w     *output.PeriodicWriter
	typed retTyped
	va    *varargs
	enums *enumNamer
	// werr and end are the emit chain's: a write error ends the trace.
	werr *error
	end  func()
}

// laneStages is what decides, once per trace, whether calls may go
// without events: any stage of the emit chain taking a whole trace
// (a filter, aggregations, stacks, a summary, -i's callers) needs the
// events.
type laneStages struct {
	filtered, aggregated, stacks, summary, callers bool
}

// newCallLane is the lane for w, nil when the stages or the writer need
// every call's events.
func newCallLane(st laneStages, w *output.PeriodicWriter, typed retTyped, va *varargs, enums *enumNamer, werr *error, end func()) probe.CallWriter {
	if st.filtered || st.aggregated || st.stacks || st.summary || st.callers || !w.TakesCalls() {
		return nil
	}
	return &callLane{w: w, typed: typed, va: va, enums: enums, werr: werr, end: end}
}

func (l *callLane) Takes(probe int, fn string) bool {
	return !l.va.has(probe, fn) && !l.enums.has(probe, fn)
}

func (l *callLane) Timed() bool { return l.w.CallsTimed() }

func (l *callLane) Call(c *probe.Call) bool {
	if *l.werr != nil {
		return true // the trace is ending: dropped, as emit drops
	}
	l.typed.call(c)
	ok, err := l.w.Call(c)
	l.failed(err)
	return ok
}

// failed ends the trace on a write error, as the emit chain does.
func (l *callLane) failed(err error) {
	if err != nil {
		*l.werr = err
		l.end()
	}
}

// Form is the lane of calls like c from their numbers
// (probe.CallForms): the writer's form, after the typed return value's
// move (a typed return value is rax, Out's one number, which the writer
// then reads as Ret's, leaving the last).
func (l *callLane) Form(c *probe.Call) probe.CallForm {
	if l.typed.is(c.Return) && len(c.Out) >= 1 {
		if len(c.Out) > 1 {
			return nil
		}
		typed := *c
		l.typed.call(&typed)
		c = &typed
	}
	f := l.w.Form(c)
	if f == nil {
		return nil
	}
	return &laneForm{l: l, f: f}
}

// laneForm is a form's lane (callLane.Form).
type laneForm struct {
	l *callLane
	f *output.Form
}

func (f *laneForm) Calls(pid, tid int, nums []uint64, strs []string, times []int64, n int) {
	l := f.l
	if *l.werr != nil {
		return // the trace is ending: dropped, as emit drops
	}
	l.failed(f.f.Calls(pid, tid, nums, strs, times, n))
}
