package pads

import (
	"unsafe"

	"github.com/utap/utap/internal/pad"
	"github.com/utap/utap/probe"
)

// Calls without events (probe.Target.Calls): an entry record whose site
// the trace's CallWriter takes is kept (the ring's record itself, valid
// until the next one is read: pad.Ring.Drain) instead of made an event;
// when the next record is the same thread's return of the same function
// the two go to the CallWriter as one probe.Call, with no event made,
// no stage run, no time converted that no line shows: a fifth less of
// the tracer's time per traced call (docs/benchmarks.md). Anything
// else, and a Call not taken, makes the kept entry's event as record
// would have, in its place; an entry no return follows goes alone, if the CallWriter takes
// it (an entry-only trace's line: Call.Return -1).
type heldCall struct {
	rec      *pad.Record
	r        *Ring
	s        *Site
	pid, tid int
}

// takes says whether the calls of site s may come without events,
// asked of the CallWriter once per site (Site.call).
func (e *events) takes(s *Site) bool {
	if s.call == 0 {
		s.call = 2
		if s.Sys == nil && e.calls.Takes(s.Index, s.Func) {
			s.call = 1
		}
	}
	return s.call == 1
}

// call takes rec (of site s, thread tid of pid) into a Call: kept if an
// entry, written with the entry kept if its return; false: rec is an
// event's to make. A kept entry that rec does not return from is made
// an event first (by d), as are the events held before it.
func (e *events) call(d *Drainer, r *Ring, rec *pad.Record, s *Site, pid, tid int) bool {
	if h := &e.held; h.rec != nil {
		if rec.Kind == pad.KindReturn && tid == h.tid && pid == h.pid && r == h.r && s.Func == h.s.Func &&
			e.takes(s) && e.write(h, rec, s) {
			h.rec = nil
			return true
		}
		e.unhold(d)
	}
	if rec.Kind != pad.KindEntry || !e.takes(s) {
		return false
	}
	if o := e.open; o != nil {
		e.open = nil // an entry's event waiting for its return: this is not it
		e.out(&o.ev)
	}
	if formable(s, rec) {
		if f := e.entryForm(s, rec); f != nil {
			e.toRun(f, r, rec, s, pid, tid, -1)
			return true
		}
	}
	// Field by field, as SetValue: not a literal built aside and copied.
	h := &e.held
	h.rec, h.r, h.s, h.pid, h.tid = rec, r, s, pid, tid
	return true
}

// unhold hands the CallWriter the kept entry, if any, alone (an
// entry-only trace's line), or makes its event.
func (e *events) unhold(d *Drainer) {
	if h := e.held; h.rec != nil {
		e.held.rec = nil
		if !e.write(&h, nil, nil) {
			d.event(h.r, h.rec, h.s, h.pid, h.tid)
		}
	}
}

// write hands the CallWriter the call of h's entry and rec, its return
// (nil: the entry alone).
func (e *events) write(h *heldCall, rec *pad.Record, s *Site) bool {
	c := e.entryCall(h)
	if e.timed {
		c.TimeNs = h.r.at(e.d.clock, h.rec.TSC)
	}
	if rec == nil {
		c.Ret = probe.Value{}
		return e.callOut(c)
	}
	if e.timed {
		c.ReturnNs = h.r.at(e.d.clock, rec.TSC)
		c.DurationNs = callDuration(e.d.clock, rec, s, c.ReturnNs)
	}
	c.Return, c.ReturnProbe = s.Index, s.Probe
	c.Out = e.callValues(&e.cOut, s, rec)
	rawRet(&c.Ret, rec, s)
	return e.callOut(c)
}

// entryCall is the Call of h's entry alone, untimed.
func (e *events) entryCall(h *heldCall) *probe.Call {
	c := &e.c
	c.PID, c.TID, c.Probe, c.Func = h.pid, h.tid, h.s.Probe, h.s.Func
	c.Entry, c.Return = h.s.Index, -1
	c.Args = e.callValues(&e.cArgs, h.s, h.rec)
	c.Out = c.Out[:0]
	c.TimeNs, c.ReturnNs, c.DurationNs = 0, 0, 0
	return c
}

// callValues is a Call's values of rec, of site s, in room, which
// keeps the last site's between calls: a record holding its site's
// values in place with no string nor fault among them (most) rewrites
// only their numbers. Values made whole were a twentieth of the
// tracer's time per traced call (docs/benchmarks.md).
func (e *events) callValues(room *callValues, s *Site, rec *pad.Record) []probe.Value {
	if s.Where != nil || rec.Strs|rec.Faults != 0 {
		room.of = nil
		return e.values(room.v[:0], s, rec, true)
	}
	return room.plain(s, rec.Vals[:len(s.Fetches)])
}

// callValues is the room of a Call's values; of, the site whose values
// but their numbers it holds (nil: none).
type callValues struct {
	v  [pad.MaxValues + pad.MaxExtra]probe.Value
	of *Site
}

// plain is s's values of the numbers raw, none a string or unreadable,
// in the room: made whole only when the last were another site's.
func (room *callValues) plain(s *Site, raw []uint64) []probe.Value {
	dst := room.v[:len(raw)]
	if room.of != s {
		for i, f := range s.Fetches {
			f.SetValue(&dst[i], 0)
		}
		room.of = s
	}
	for i, u := range raw {
		dst[i].Int = u
	}
	return dst
}

// values is the record's values, as its site's fetches make them, in
// dst's room (at least pad.MaxValues). Strings are copied out of the
// ring unless inPlace: a Call's live only while its CallWriter takes it,
// within the drain (pad.Ring.SetDrained), and copying them was a tenth
// of a traced string's cost.
func (e *events) values(dst []probe.Value, s *Site, rec *pad.Record, inPlace bool) []probe.Value {
	dst = dst[:len(s.Fetches)]
	for i, f := range s.Fetches {
		v := &dst[i]
		j := i // the record's value
		if s.Where != nil {
			switch w := s.Where[i]; {
			case w == FromRax:
				*v = f.RetValue(rec.Vals[s.recorded()])
				continue
			case w < FromRax:
				f.SetValue(v, rec.Extra(int(-2-w)))
				continue
			default:
				j = int(w)
			}
		}
		switch bit := uint8(1) << j; {
		case rec.Faults&bit != 0:
			*v = f.Unreadable()
		case rec.Strs&bit != 0:
			if b, ok := rec.Str(j); ok {
				*v = f.StrValue(nil)
				if inPlace {
					v.Str = unsafe.String(unsafe.SliceData(b), len(b))
				} else {
					v.Str = e.str(b)
				}
			} else {
				*v = f.NullValue()
			}
		default:
			f.SetValue(v, rec.Vals[j])
		}
	}
	return dst
}

// oneRecord hands the CallWriter a call its pads wrote in one record
// (pad.KindCall), of entry site s and return site rs, straight from it:
// no split into an entry's record and a return's, no entry kept, about
// a tenth of the tracer's time per traced call (docs/benchmarks.md).
// False: not written (an entry kept before it, an entry's event waiting,
// a site the writer declines, a return whose values are not the
// record's rax alone, a clock but for a form): the record goes the two
// records' way.
func (e *events) oneRecord(r *Ring, rec *pad.Record, s, rs *Site, pid, tid int) bool {
	if e.held.rec != nil || e.open != nil || rs.Where != nil || len(rs.Fetches) > 1 || !e.takes(s) || !e.takes(rs) {
		return false
	}
	if formable(s, rec) {
		if f := e.form(s, rs, rec); f != nil {
			e.toRun(f, r, rec, s, pid, tid, len(rs.Fetches))
			return true
		}
	}
	if e.timed {
		return false // the two records' way converts the times
	}
	return e.callOut(e.oneCall(rec, s, rs, pid, tid))
}

// formable says whether rec's values, of site s, are numbers and
// strings alone, each in its record value (a form's: none unreadable, no
// NULL string).
func formable(s *Site, rec *pad.Record) bool {
	if s.Where != nil || rec.Faults != 0 {
		return false
	}
	for m, i := rec.Strs, 0; m != 0; m, i = m>>1, i+1 {
		if m&1 == 0 {
			continue
		}
		if _, ok := rec.Str(i); !ok {
			return false
		}
	}
	return true
}

// toRun adds rec, of site s, to the run of form f: its numbers and
// strings (outs as formRun.add), its times when lines show them.
func (e *events) toRun(f probe.CallForm, r *Ring, rec *pad.Record, s *Site, pid, tid, outs int) {
	e.run.add(f, s, pid, tid, rec, outs)
	if e.timed {
		e.run.timed(r, e.d.clock, rec, outs >= 0)
	}
	if e.run.n == formRunMax {
		e.run.flush()
	}
}

// formRun is calls (or entries alone) of one form and thread, their
// numbers and strings waiting to go to the form together
// (probe.CallForm): one pass through the lane and the writer a run, not
// a call (a fifth of the drainer's time per call). Flushed by whatever
// the drain emits after them (events.out, callOut) and at the drain's
// end (events.end).
type formRun struct {
	f        probe.CallForm
	pid, tid int
	width, n int
	nums     [formRunMax * (pad.MaxOpenValues + 2)]uint64
	// strs: the calls' strings, ns of them, in the ring (valid until
	// the drain ends, which flushes the run first).
	strs [formRunMax * pad.MaxValues]string
	ns   int
	// times: each call's TimeNs, ReturnNs and DurationNs, when the
	// CallWriter is Timed (timed); nt of them.
	times [formRunMax * 3]int64
	nt    int
}

// formRunMax is the calls of a run.
const formRunMax = 64

// add adds rec's call to the run, of site s whose return fetches outs
// values (at most its typed return value): Args', Out's (rax), Ret's
// (rax); outs -1: rec is an entry alone, its Args' only.
func (run *formRun) add(f probe.CallForm, s *Site, pid, tid int, rec *pad.Record, outs int) {
	if run.n > 0 && (run.f != f || run.tid != tid || run.pid != pid) {
		run.flush()
	}
	w := len(s.Fetches) + outs + 1
	dst := run.nums[run.n*w : (run.n+1)*w]
	copy(dst, rec.Vals[:len(s.Fetches)])
	for m, i := rec.Strs, 0; m != 0; m, i = m>>1, i+1 {
		if m&1 != 0 {
			b, _ := rec.Str(i)
			run.strs[run.ns] = unsafe.String(unsafe.SliceData(b), len(b))
			run.ns++
		}
	}
	if outs >= 0 {
		rax := rec.Vals[pad.MaxOpenValues]
		dst[w-1] = rax
		if outs == 1 {
			dst[w-2] = rax
		}
	}
	run.f, run.pid, run.tid, run.width = f, pid, tid, w
	run.n++
}

// timed adds the times of rec's call, the run's last, as the two
// records' way converts them (events.write): the entry's, the return's
// (ret: rec is a call's, not an entry's alone), the duration from the
// entry's tsc.
func (run *formRun) timed(r *Ring, clock *pad.Clock, rec *pad.Record, ret bool) {
	t := run.times[3*run.nt : 3*run.nt+3]
	t[0], t[1], t[2] = r.at(clock, rec.TSC), 0, 0
	if ret {
		t[1] = r.at(clock, rec.Vals[pad.MaxOpenValues+1])
		if entry := clock.Nanos(rec.TSC); entry <= t[1] {
			t[2] = t[1] - entry
		}
	}
	run.nt++
}

// flush writes the run's calls.
func (run *formRun) flush() {
	if n := run.n; n > 0 {
		var times []int64
		if run.nt > 0 {
			times = run.times[:3*run.nt]
		}
		strs := run.strs[:run.ns]
		run.n, run.nt, run.ns = 0, 0, 0
		run.f.Calls(run.pid, run.tid, run.nums[:n*run.width], strs, times, n)
	}
}

// oneCall is the Call of a one-record call (oneRecord).
func (e *events) oneCall(rec *pad.Record, s, rs *Site, pid, tid int) *probe.Call {
	c := &e.c
	c.PID, c.TID, c.Probe, c.Func = pid, tid, s.Probe, s.Func
	c.Entry, c.Return, c.ReturnProbe = s.Index, rs.Index, rs.Probe
	c.TimeNs, c.ReturnNs, c.DurationNs = 0, 0, 0
	c.Args = e.callValues(&e.cArgs, s, rec)
	// The return's values: its typed return value, if fetched (rax).
	rax := [1]uint64{rec.Vals[pad.MaxOpenValues]}
	c.Out = e.cOut.plain(rs, rax[:len(rs.Fetches)])
	setRawRet(&c.Ret, rax[0])
	return c
}

// entryForm is the writer of s's entries alone from their numbers
// (probe.CallForms), when no return site follows s's (its return pad's
// is the next id: recordSites), asked once with rec's Call; nil: they
// come as Calls or events.
func (e *events) entryForm(s *Site, rec *pad.Record) probe.CallForm {
	if !s.entryFormed {
		s.entryFormed = true
		sites := e.d.sites
		if id := int(rec.Site) + 1; e.forms != nil && (id >= len(sites) || !sites[id].Return || sites[id].Func != s.Func) {
			h := heldCall{rec: rec, s: s}
			s.entryForm = e.forms.Form(e.entryCall(&h))
		}
	}
	return s.entryForm
}

// form is the writer of s's one-record calls (returning at rs) from
// their numbers (probe.CallForms), asked once with rec's Call, whose
// values are numbers (oneRecord); nil: they come as Calls.
func (e *events) form(s, rs *Site, rec *pad.Record) probe.CallForm {
	if !s.formed {
		s.formed = true
		if e.forms != nil && len(rs.Fetches) <= 1 {
			s.form = e.forms.Form(e.oneCall(rec, s, rs, 0, 0))
		}
	}
	return s.form
}
