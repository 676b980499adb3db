package pads

import (
	"github.com/utap/utap/internal/pad"
	"github.com/utap/utap/probe"
)

// returnOf makes pe a return event, as the breakpoint path makes one:
// the raw rax as Ret (the CLI types it), the duration from the entry's
// tsc the return pad copied from the shadow stack, converted by clock.
func returnOf(pe *padEvent, rec *pad.Record, s *Site, clock *pad.Clock) {
	pe.ev.Kind = "return"
	rawRet(&pe.ret, rec, s)
	pe.ev.Ret = &pe.ret
	pe.ev.DurationNs = callDuration(clock, rec, s, pe.ev.TimeNs)
}

// rawRet makes *v a return record's rax, after its site's values.
func rawRet(v *probe.Value, rec *pad.Record, s *Site) { setRawRet(v, rec.Vals[s.recorded()]) }

// setRawRet makes *v the untyped return value rax, field by field
// (bytecode.Program.SetValue says why).
func setRawRet(v *probe.Value, rax uint64) {
	v.Int, v.Str, v.IsStr, v.Err, v.Null, v.Name = rax, "", false, false, false, ""
	v.Format, v.Signed = probe.FormatDefault, true
}

// callDuration is the duration of the call a return record ends at ns:
// from its entry's tsc, after rax; 0 if that converts later than ns.
func callDuration(clock *pad.Clock, rec *pad.Record, s *Site, ns int64) int64 {
	if entry := clock.Nanos(rec.Vals[s.recorded()+1]); entry <= ns {
		return ns - entry
	}
	return 0
}

// at is tsc in the clock's nanoseconds, never earlier than the time the
// ring's last record got: each drain refines the clock's rate, and a
// record converted after it must not come out earlier than the one
// before.
func (r *Ring) at(clock *pad.Clock, tsc uint64) int64 {
	r.lastNs = max(clock.Nanos(tsc), r.lastNs)
	return r.lastNs
}

// RetMissed is the calls whose return the pads did not hijack (a shadow
// stack full), in rings gone.
func (d *Drainer) RetMissed() uint64 { return d.retMissed }
