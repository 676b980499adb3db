package output

import "io"

// lineBuf is a buffered writer that lines are formatted into in place:
// bufio.Writer would copy each line a second time, from the line's own
// buffer into its own. Whole lines are written, 64 KiB at a time; a full
// buffer is written by a goroutine while the next fills (a file's write
// costs as much as formatting its lines), Flush waits for it.
type lineBuf struct {
	w     io.Writer
	buf   []byte
	spare []byte        // the other buffer, while no write holds it
	done  chan struct{} // closed when the write in flight ends; nil: none
	werr  error         // the write in flight's, read after done
	err   error         // sticky, as bufio's
}

const (
	lineBufSize = 64 << 10
	// lineBufFull leaves room for a usual line: a longer one grows buf
	// once.
	lineBufFull = lineBufSize - 4<<10
)

func newLineBuf(w io.Writer) *lineBuf {
	return &lineBuf{w: w, buf: make([]byte, 0, lineBufSize), spare: make([]byte, 0, lineBufSize)}
}

// room is the buffer to append the next line to.
func (l *lineBuf) room() []byte { return l.buf }

// commit takes b, the buffer returned by room with a line appended.
func (l *lineBuf) commit(b []byte) error {
	l.buf = b
	if len(b) < lineBufFull || l.err != nil {
		return l.err
	}
	if err := l.wait(); err != nil {
		return err
	}
	full := l.buf
	l.buf, l.spare = l.spare[:0], nil
	l.done = make(chan struct{}) // one per 64 KiB, not per line
	go func() {
		l.werr = writeAll(l.w, full)
		l.spare = full
		close(l.done)
	}()
	return nil
}

// wait waits for the write in flight, if any.
func (l *lineBuf) wait() error {
	if l.done != nil {
		<-l.done
		l.done = nil
		if l.err == nil {
			l.err = l.werr
		}
	}
	return l.err
}

func (l *lineBuf) Flush() error {
	if err := l.wait(); err != nil || len(l.buf) == 0 {
		return err
	}
	if l.err = writeAll(l.w, l.buf); l.err == nil {
		l.buf = l.buf[:0]
	}
	return l.err
}

func writeAll(w io.Writer, b []byte) error {
	n, err := w.Write(b)
	if err == nil && n < len(b) {
		err = io.ErrShortWrite
	}
	return err
}
