//go:build linux && amd64

package ptrace

import (
	"github.com/utap/utap/internal/pad"
	"github.com/utap/utap/ssol"
)

// Placing an image's system call pads (≈ 500 in libc) a site at a time
// was four system calls a site on /proc/PID/mem (its bytes read, its pad,
// stub and jump written): with the traps' three, a third of a -f trace's
// cost per exec. The bytes come from the plan (read from memory a moment
// before), and the pads and their stubs go in runs, a vectored write
// each where they lie next to each other (no copy); then the jumps. The
// threads are all stopped: the order that matters is the jumps last.

// sysBuilt is a site whose pad and stub are made, its jump to write.
type sysBuilt struct {
	s     *sysSite
	jmp   []byte
	id    uint32
	parts pad.SysParts
}

// origOf is the bytes the jump to site s's pad replaces: its displaced
// instructions' as planned from memory in this placement (the threads
// stopped since), read again only if they do not cover them.
func (sc sysScan) origOf(s *sysSite, d *ssol.Displaced) ([]byte, error) {
	b := make([]byte, 0, d.Len)
	for _, in := range d.Insns {
		if in.Addr != s.first+uint64(len(b)) {
			break
		}
		b = append(b, in.Bytes...)
	}
	if len(b) >= d.Len {
		return b[:d.Len], nil
	}
	b = make([]byte, d.Len)
	return b, sc.p.mem.ReadByMem(b, s.first)
}

// writeRuns gathers pieces of code laid out one after another (each at
// its predecessor's start plus its length rounded up to 16, as
// sysPads.take leaves them) into runs, a vectored write each (no copy);
// int3s fill the gaps.
type writeRuns struct {
	runs []writeRun
}

type writeRun struct {
	at     uint64
	end    uint64   // where a piece following the run's would start
	pieces [][]byte // the code and the fillers
}

// int3s fill the gaps between pieces (less than 16 bytes).
var int3s = []byte{0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc}

func (w *writeRuns) add(at uint64, code []byte) {
	next := at + uint64(len(code)+15)&^15
	if n := len(w.runs); n > 0 && w.runs[n-1].end == at {
		r := &w.runs[n-1]
		last := r.pieces[len(r.pieces)-1]
		if gap := (len(last)+15)&^15 - len(last); gap > 0 {
			r.pieces = append(r.pieces, int3s[:gap])
		}
		r.pieces, r.end = append(r.pieces, code), next
		return
	}
	w.runs = append(w.runs, writeRun{at: at, end: next, pieces: [][]byte{code}})
}

func (w *writeRuns) write(m interface {
	WritevAt([][]byte, uint64) error
}) error {
	for _, r := range w.runs {
		if err := m.WritevAt(r.pieces, r.at); err != nil {
			return err
		}
	}
	return nil
}
