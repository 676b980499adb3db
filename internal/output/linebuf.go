package output

import "io"

// lineBuf is a buffered writer that lines are formatted into in place:
// bufio.Writer would copy each line a second time, from the line's own
// buffer into its own. Whole lines are written, 256 KiB at a time.
//
// A full buffer is written by a goroutine of its own while lines go on
// into a second one: the kernel's write into a file's page cache (its
// pages allocated, the bytes copied) was a tenth of the tracer's time
// for the default trace and two fifths for JSON, the tracer's goroutine
// being the pace of a busy trace. One write is in flight at most; Flush
// waits for it and writes what is left itself, so a terminal's lines
// (a Flush per line) are written as before, in order.
type lineBuf struct {
	w   io.Writer
	buf []byte
	err error // sticky, as bufio's
	// spare is the buffer lines go into next; writing: the write of the
	// other is in flight and says how it ended on done.
	spare   []byte
	writing bool
	done    chan error
}

const (
	// lineBufSize: a write of 256 KiB, not 64, hands a busy trace's
	// writes over a quarter as often (each a goroutine started and a
	// thread woken: 13% of a JSON trace's time here).
	lineBufSize = 256 << 10
	// lineBufFull leaves room for a usual line: a longer one grows buf
	// once.
	lineBufFull = lineBufSize - 4<<10
	// lineBufStart: a buffer grows to its size as lines come; -ff's
	// writers, one per thread, mostly write little.
	lineBufStart = 4 << 10
)

func newLineBuf(w io.Writer) *lineBuf {
	return &lineBuf{w: w, buf: make([]byte, 0, lineBufStart), done: make(chan error, 1)}
}

// commit takes b, the buffer returned by room with a line appended.
func (l *lineBuf) commit(b []byte) error {
	l.buf = b
	if len(b) >= lineBufFull {
		return l.writeBehind()
	}
	return l.err
}

// room is the buffer to append the next line to.
func (l *lineBuf) room() []byte { return l.buf }

// writeBehind hands the full buffer to a goroutine that writes it, once
// the write before has ended, and takes the spare one.
func (l *lineBuf) writeBehind() error {
	if l.wait() != nil {
		return l.err
	}
	full := l.buf
	if l.spare == nil {
		l.spare = make([]byte, 0, lineBufSize)
	}
	l.buf, l.spare = l.spare[:0], full
	l.writing = true
	go func() { l.done <- writeAll(l.w, full) }()
	return nil
}

// wait waits for the write in flight, if any, and returns the sticky
// error.
func (l *lineBuf) wait() error {
	if l.writing {
		l.writing = false
		if err := <-l.done; err != nil && l.err == nil {
			l.err = err
		}
	}
	return l.err
}

func (l *lineBuf) Flush() error {
	if l.wait() != nil || len(l.buf) == 0 {
		return l.err
	}
	if err := writeAll(l.w, l.buf); err != nil {
		l.err = err
		return err
	}
	l.buf = l.buf[:0]
	return nil
}

func writeAll(w io.Writer, b []byte) error {
	n, err := w.Write(b)
	if err == nil && n < len(b) {
		err = io.ErrShortWrite
	}
	return err
}
