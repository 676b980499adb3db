package output

import (
	"github.com/utap/utap/internal/dec"
	"github.com/utap/utap/probe"
)

// jsonHeads keeps the last few events' fields from "pid" to "args" as
// written: a trace's events mostly repeat a few of them (one thread, one
// probe or an entry and its return), and formatting them anew was a good
// part of a line's cost.
type jsonHeads struct {
	slots [4]jsonHead
	next  int // the slot to replace
}

type jsonHead struct {
	pid, tid        int
	probe, fn, kind string
	b               []byte // `,"pid":…,"kind":"…","args":[`; nil: unused
}

// of is ev's fields from "pid" to the opening of "args", as written.
func (h *jsonHeads) of(ev *probe.Event) []byte {
	for i := range h.slots {
		s := &h.slots[i]
		if s.b != nil && s.pid == ev.PID && s.tid == ev.TID && s.kind == ev.Kind && s.fn == ev.Func && s.probe == ev.Probe {
			return s.b
		}
	}
	s := &h.slots[h.next]
	h.next = (h.next + 1) % len(h.slots)
	b := append(s.b[:0], `,"pid":`...)
	b = dec.AppendInt(b, int64(ev.PID))
	b = append(b, `,"tid":`...)
	b = dec.AppendInt(b, int64(ev.TID))
	b = append(b, `,"probe":`...)
	b = appendJSONString(b, ev.Probe)
	b = append(b, `,"func":`...)
	b = appendJSONString(b, ev.Func)
	b = append(b, `,"kind":`...)
	b = appendJSONString(b, ev.Kind)
	b = append(b, `,"args":[`...)
	*s = jsonHead{pid: ev.PID, tid: ev.TID, probe: ev.Probe, fn: ev.Func, kind: ev.Kind, b: b}
	return b
}

// msDigits keeps the digits of the last time's milliseconds: events
// within one share them, and only the last six digits are formatted.
type msDigits struct {
	ms     int64
	digits []byte // nil: none kept
}

// append appends ns in decimal.
func (m *msDigits) append(b []byte, ns int64) []byte {
	ms := ns / 1e6
	if ms <= 0 {
		return dec.AppendInt(b, ns)
	}
	if ms != m.ms || m.digits == nil {
		m.ms, m.digits = ms, dec.AppendInt(m.digits[:0], ms)
	}
	return dec.AppendPad6(append(b, m.digits...), uint64(ns-ms*1e6))
}
