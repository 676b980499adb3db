package pads

import (
	"github.com/utap/utap/internal/pad"
	"github.com/utap/utap/probe"
)

// returnOf makes pe a return event, as the breakpoint path makes one:
// the raw rax as Ret (the CLI types it), the duration from the entry's
// tsc the return pad copied from the shadow stack, converted by clock.
func returnOf(pe *padEvent, rec *pad.Record, s *Site, clock *pad.Clock) {
	n := len(s.Fetches)
	pe.ev.Kind = "return"
	pe.ret = probe.Value{Int: rec.Vals[n], Signed: true}
	pe.ev.Ret = &pe.ret
	if entry := clock.Nanos(rec.Vals[n+1]); entry <= pe.ev.TimeNs {
		pe.ev.DurationNs = pe.ev.TimeNs - entry
	}
}

// RetMissed is the calls whose return the pads did not hijack (a shadow
// stack full), in rings gone.
func (d *Drainer) RetMissed() uint64 { return d.retMissed }
