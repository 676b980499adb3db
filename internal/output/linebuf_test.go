package output

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

// TestLineBufWriteBehind: lines over several buffers come out whole and
// in order, written behind while lines go on, and Flush leaves nothing
// in flight.
func TestLineBufWriteBehind(t *testing.T) {
	var out, want bytes.Buffer
	l := newLineBuf(&out)
	for i := range 40000 {
		line := fmt.Sprintf("[pid 1] work(%d, 2) = %d\n", i, i+2)
		want.WriteString(line)
		if err := l.commit(append(l.room(), line...)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if want.Len() < 4*lineBufSize {
		t.Fatalf("only %d bytes: not over several buffers", want.Len())
	}
	if !bytes.Equal(out.Bytes(), want.Bytes()) {
		t.Fatalf("%d bytes out, %d in, or not the same", out.Len(), want.Len())
	}
}

// failAfter accepts n bytes, then fails every write.
type failAfter struct{ n int }

var errFull = errors.New("no space left")

func (f *failAfter) Write(b []byte) (int, error) {
	if f.n < len(b) {
		return 0, errFull
	}
	f.n -= len(b)
	return len(b), nil
}

// TestLineBufWriteBehindError: a write that fails behind the lines is
// the error of a later commit or of Flush, and stays.
func TestLineBufWriteBehindError(t *testing.T) {
	l := newLineBuf(&failAfter{n: lineBufSize})
	var err error
	for i := 0; i < 100000 && err == nil; i++ {
		err = l.commit(append(l.room(), "[pid 1] work(1, 2) = 3\n"...))
	}
	if !errors.Is(err, errFull) {
		t.Fatalf("commit: %v, want %v", err, errFull)
	}
	if err := l.Flush(); !errors.Is(err, errFull) {
		t.Fatalf("Flush: %v, want %v", err, errFull)
	}
}
