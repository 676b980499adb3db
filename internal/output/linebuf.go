package output

import "io"

// lineBuf is a buffered writer that lines are formatted into in place:
// bufio.Writer would copy each line a second time, from the line's own
// buffer into its own. Whole lines are written, 64 KiB at a time.
type lineBuf struct {
	w   io.Writer
	buf []byte
	err error // sticky, as bufio's
}

const (
	lineBufSize = 64 << 10
	// lineBufFull leaves room for a usual line: a longer one grows buf
	// once.
	lineBufFull = lineBufSize - 4<<10
)

func newLineBuf(w io.Writer) *lineBuf {
	return &lineBuf{w: w, buf: make([]byte, 0, lineBufSize)}
}

// commit takes b, the buffer returned by room with a line appended.
func (l *lineBuf) commit(b []byte) error {
	l.buf = b
	if len(b) >= lineBufFull {
		return l.Flush()
	}
	return l.err
}

// room is the buffer to append the next line to.
func (l *lineBuf) room() []byte { return l.buf }

func (l *lineBuf) Flush() error {
	if l.err != nil || len(l.buf) == 0 {
		return l.err
	}
	n, err := l.w.Write(l.buf)
	if err == nil && n < len(l.buf) {
		err = io.ErrShortWrite
	}
	if err != nil {
		l.err = err
		return err
	}
	l.buf = l.buf[:0]
	return nil
}
