package output

import (
	"bufio"
	"io"
	"strconv"
	"strings"

	"github.com/utap/utap/internal/dec"
	"github.com/utap/utap/probe"
)

// perfetto writes the Chrome trace-event JSON that ui.perfetto.dev and
// chrome://tracing open: a call whose entry probe has a return twin
// (Options.Calls) is a slice on its thread (B at the entry, E at the
// return), a lone entry an instant, a lone return probe a complete event
// (X) when its duration is known. Processes and threads are named from
// /proc as they first appear. Events are written as they come, so a trace
// of any length takes no memory.
// slice is a call whose B is written and whose E is not yet.
type slice struct {
	name string
	pid  int
}

type perfetto struct {
	w       *bufio.Writer
	strLen  int
	opens   map[int]bool    // entry probes with a return twin
	closes  map[int]bool    // those twins
	named   map[int]bool    // pids and tids named already
	open    map[int][]slice // open slices per thread, innermost last
	last    int64           // the latest timestamp seen
	started bool
	b       []byte
}

func newPerfetto(w io.Writer, o Options) *perfetto {
	p := &perfetto{w: bufio.NewWriterSize(w, 64<<10), strLen: o.StrLen, opens: map[int]bool{}, closes: map[int]bool{},
		named: map[int]bool{}, open: map[int][]slice{}}
	if p.strLen == 0 {
		p.strLen = DefaultStrLen
	}
	for entry, ret := range o.Calls {
		p.opens[entry], p.closes[ret] = true, true
	}
	return p
}

func (p *perfetto) Write(ev *probe.Event) error {
	if ev.Sys != nil && ev.Kind == "entry" {
		return nil // its return is the whole call, a slice
	}
	p.nameTask(ev.PID, ev.PID, "process_name")
	if ev.TID != ev.PID {
		p.nameTask(ev.PID, ev.TID, "thread_name")
	} else {
		p.nameTask(ev.PID, -ev.TID, "thread_name")
	}
	p.last = max(p.last, ev.TimeNs)
	ph := "i"
	switch open := p.open[ev.TID]; {
	case ev.Kind == "entry" && p.opens[ev.ProbeIndex]:
		ph = "B"
		p.open[ev.TID] = append(open, slice{ev.Func, ev.PID})
	case ev.Kind == "return" && p.closes[ev.ProbeIndex]:
		if len(open) == 0 {
			return nil // its entry came before the trace: nothing to close
		}
		ph = "E"
		p.open[ev.TID] = open[:len(open)-1]
	case ev.Kind == "return" && ev.DurationNs > 0:
		ph = "X"
	}
	ts := ev.TimeNs
	if ph == "X" {
		ts -= ev.DurationNs
	}
	b := p.begin(ev.Func, ph, ts, ev.PID, ev.TID)
	if ph == "X" {
		b = append(b, `,"dur":`...)
		b = appendMicros(b, ev.DurationNs)
	}
	if ph == "i" {
		b = append(b, `,"s":"t"`...)
	}
	b = append(b, `,"args":{`...)
	for i := range ev.Args {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, "arg"+strconv.Itoa(i+1))
		b = append(b, ':')
		b = appendJSONString(b, string(formatValue(nil, &ev.Args[i], p.strLen)))
	}
	if ev.Ret != nil {
		if len(ev.Args) > 0 {
			b = append(b, ',')
		}
		b = append(b, `"ret":`...)
		b = appendJSONString(b, string(formatValue(nil, ev.Ret, p.strLen)))
	}
	b = append(b, "}}"...)
	p.b = b
	_, err := p.w.Write(b)
	return err
}

// begin starts an event object, after the array's opening or a comma.
func (p *perfetto) begin(name, ph string, ts int64, pid, tid int) []byte {
	b := p.b[:0]
	if !p.started {
		b = append(b, `{"displayTimeUnit":"ns","traceEvents":[`+"\n"...)
		p.started = true
	} else {
		b = append(b, ",\n"...)
	}
	b = append(b, `{"name":`...)
	b = appendJSONString(b, name)
	b = append(b, `,"cat":"utap","ph":"`...)
	b = append(b, ph...)
	b = append(b, `","ts":`...)
	b = appendMicros(b, ts)
	b = append(b, `,"pid":`...)
	b = dec.AppendInt(b, int64(pid))
	b = append(b, `,"tid":`...)
	b = dec.AppendInt(b, int64(tid))
	return b
}

// nameTask writes the metadata event naming a process or thread the first
// time it is seen (a thread's key is negated when it is its process's
// leader, whose pid is the process's key too).
func (p *perfetto) nameTask(pid, key int, what string) {
	if p.named[key] {
		return
	}
	p.named[key] = true
	tid := key
	if tid < 0 {
		tid = -tid
	}
	name := strings.TrimSpace(threadComm(pid, tid))
	if name == "" {
		name = strconv.Itoa(tid)
	}
	b := p.begin(what, "M", 0, pid, tid)
	b = append(b, `,"args":{"name":`...)
	b = appendJSONString(b, name)
	b = append(b, "}}"...)
	p.b = b
	p.w.Write(b)
}

func (p *perfetto) Flush() error { return p.w.Flush() }

// End closes the slices still open (calls running when the trace ended are
// cut there) and the JSON document.
func (p *perfetto) End() error {
	for tid, open := range p.open {
		for i := len(open) - 1; i >= 0; i-- {
			p.b = append(p.begin(open[i].name, "E", p.last, open[i].pid, tid), '}')
			if _, err := p.w.Write(p.b); err != nil {
				return err
			}
		}
	}
	b := p.b[:0]
	if !p.started {
		b = append(b, `{"displayTimeUnit":"ns","traceEvents":[`...)
	}
	p.b = append(b, "\n]}\n"...)
	if _, err := p.w.Write(p.b); err != nil {
		return err
	}
	return p.w.Flush()
}

// appendMicros writes ns as microseconds with nanosecond digits, the
// trace-event format's unit.
func appendMicros(b []byte, ns int64) []byte {
	b = dec.AppendInt(b, ns/1000)
	frac := ns % 1000
	if frac < 0 {
		frac = -frac
	}
	b = append(b, '.')
	s := strconv.FormatInt(frac+1000, 10)
	return append(b, s[1:]...)
}
