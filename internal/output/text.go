package output

import (
	"bufio"
	"io"
	"strconv"
	"time"

	"github.com/utap/utap/probe"
)

// text writes one ltrace-like line per event:
//
//	[pid 1234] work(1, 2)
//	[pid 1234] work() = 4 <0.000012>
//
// The bracketed number is the thread id, as in strace (it equals the pid
// for a process's main thread).
type text struct {
	w    *bufio.Writer
	o    Options
	off  time.Duration
	line []byte
}

func newText(w io.Writer, o Options) *text {
	switch {
	case o.StrLen == 0:
		o.StrLen = DefaultStrLen
	case o.StrLen < 0:
		o.StrLen = 0
	}
	return &text{w: bufio.NewWriterSize(w, 64<<10), o: o, off: monoToWall()}
}

func (t *text) Write(ev *probe.Event) error {
	b := t.line[:0]
	if t.o.WallClock {
		wall := time.Unix(0, ev.TimeNs+int64(t.off))
		b = wall.AppendFormat(b, "15:04:05.000000 ")
	}
	b = append(b, "[pid "...)
	b = strconv.AppendInt(b, int64(ev.TID), 10)
	b = append(b, "] "...)
	name := ev.Func
	if name == "" {
		name = ev.Probe
	}
	b = append(b, name...)
	b = append(b, '(')
	for i := range ev.Args {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = formatValue(b, &ev.Args[i], t.o.StrLen)
	}
	b = append(b, ')')
	if ev.Kind == "return" {
		b = append(b, " = "...)
		if ev.Ret != nil {
			b = formatValue(b, ev.Ret, t.o.StrLen)
		} else {
			b = append(b, '?')
		}
		if t.o.Durations && ev.DurationNs > 0 {
			b = append(b, " <"...)
			b = strconv.AppendFloat(b, float64(ev.DurationNs)/1e9, 'f', 6, 64)
			b = append(b, '>')
		}
	}
	b = append(b, '\n')
	t.line = b
	_, err := t.w.Write(b)
	return err
}

func (t *text) Flush() error { return t.w.Flush() }
