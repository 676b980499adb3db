//go:build linux && amd64

package ptrace

import (
	"encoding/binary"

	"golang.org/x/sys/unix"

	"github.com/utap/utap/internal/proc"
)

// stackScan is how much of a stack in use is searched for saved rips.
const stackScan = 64 << 10

// threadWords returns th's rip then the words of its stack in use, when
// th is stopped: what decides whether code under it may change.
func threadWords(p *process, th *thread, ms []mapping) ([]uint64, bool) {
	if !th.stopped {
		return nil, false
	}
	var regs unix.PtraceRegs
	if proc.GetRegs(th.tid, &regs) != nil {
		return nil, false
	}
	out := []uint64{regs.Rip}
	end := regs.Rsp
	for _, m := range ms {
		if regs.Rsp >= m.Start && regs.Rsp < m.End {
			end = m.End
			break
		}
	}
	n := min(end-regs.Rsp, stackScan) &^ 7
	if n == 0 {
		return out, true
	}
	buf := make([]byte, n)
	if p.mem.ReadAt(buf, regs.Rsp) != nil {
		return out, true
	}
	for i := 0; i+8 <= len(buf); i += 8 {
		out = append(out, binary.LittleEndian.Uint64(buf[i:]))
	}
	return out, true
}
