package output

import (
	"io"

	"github.com/utap/utap/internal/dec"
	"github.com/utap/utap/probe"
)

// jsonLines writes one JSON object per event in the schema of
// docs/output.md. It appends by hand rather than using encoding/json: the
// schema is fixed and this runs once per event.
type jsonLines struct {
	w     *lineBuf
	heads jsonHeads
	time  msDigits
	call  probe.Event // a Call's two events in turn, written as Write writes them
}

func newJSON(w io.Writer) *jsonLines {
	return &jsonLines{w: newLineBuf(w)}
}

func (j *jsonLines) Write(ev *probe.Event) error {
	if ev.Sys != nil && ev.Kind == "entry" {
		return nil // one line per call: its return has it all
	}
	b := append(j.w.room(), `{"time_ns":`...)
	b = j.time.append(b, ev.TimeNs)
	b = append(b, j.heads.of(ev)...)
	for i := range ev.Args {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonValue(b, &ev.Args[i])
	}
	if ev.Ret != nil {
		b = append(b, `],"ret":`...)
		b = jsonValue(b, ev.Ret)
		b = append(b, `,"duration_ns":`...)
	} else {
		b = append(b, `],"ret":null,"duration_ns":`...)
	}
	b = dec.AppendInt(b, ev.DurationNs)
	b = appendJSONSys(b, ev)
	if len(ev.Stack) > 0 {
		b = appendJSONStack(b, ev.Stack)
	}
	b = append(b, "}\n"...)
	return j.w.commit(b)
}

func (j *jsonLines) Flush() error { return j.w.Flush() }

// takesCalls: every line can come from a Call.
func (j *jsonLines) takesCalls() bool { return true }

// callsTimed: every line has its time.
func (j *jsonLines) callsTimed() bool { return true }

// Call writes a call that came without events (probe.Call) as the
// lines of its two events, the entry alone if c.Return < 0: the events
// filled in place, not made and passed on (a tenth of the tracer's time
// per call).
func (j *jsonLines) Call(c *probe.Call) (bool, error) {
	e := &j.call
	e.PID, e.TID, e.Func = c.PID, c.TID, c.Func
	e.Probe, e.Kind, e.TimeNs, e.Args, e.Ret, e.DurationNs = c.Probe, "entry", c.TimeNs, c.Args, nil, 0
	if err := j.Write(e); err != nil || c.Return < 0 {
		return true, err
	}
	e.Probe, e.Kind, e.TimeNs, e.Args, e.Ret, e.DurationNs = c.ReturnProbe, "return", c.ReturnNs, c.Out, &c.Ret, c.DurationNs
	return true, j.Write(e)
}
