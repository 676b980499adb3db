//go:build linux && amd64

package uprobe

import (
	"encoding/binary"
	"errors"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/utap/utap/internal/ustack"
	"github.com/utap/utap/probe"
)

// stackDecoder turns the stack areas of records (stack.go) into frames:
// the kernel's walk as it is, or the copied registers and stack unwound
// with the ptrace engine's DWARF CFI unwinder. Only the ring's reader
// goroutine uses it.
type stackDecoder struct {
	unw ustack.Unwinder
	// sys holds, per thread, the stack of the system call it entered
	// (a stack record), until that call's record comes.
	sys map[int]sysStack
}

type sysStack struct {
	nr     int
	frames []probe.Frame
}

// frames decodes the stack area of a record of process pid.
func (d *stackDecoder) frames(area []byte, pid int, sc stackConf) []probe.Frame {
	le := binary.LittleEndian
	if sc.fp {
		n := int64(le.Uint64(area))
		if n <= 0 {
			return nil
		}
		n = min(n, int64(8*sc.depth)) / 8
		frames := make([]probe.Frame, 0, n)
		for i := range int(n) {
			a := le.Uint64(area[8+8*i:])
			if a == 0 {
				break
			}
			frames = append(frames, probe.Frame{Addr: a})
		}
		return frames
	}
	var regs unix.PtraceRegs
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&regs)), ptRegsSize), area[stkOffRegs:]) // pt_regs is user_regs_struct's start
	n := min(le.Uint64(area), stkDataSize)
	mem := copiedStack{sp: regs.Rsp, b: area[stkOffData : stkOffData+n]}
	var rets [stkMaxRets][2]uint64
	for i := range rets {
		rets[i] = [2]uint64{le.Uint64(area[stkOffRets+16*i:]), le.Uint64(area[stkOffRets+16*i+8:])}
	}
	fix := func(slot, ra uint64) uint64 {
		for _, r := range rets {
			if r[0] == slot && r[0] != 0 {
				return r[1] // the kernel's uretprobe trampoline stands there
			}
		}
		return ra
	}
	pcs := d.unw.Walk(pid, &regs, mem, fix, sc.depth)
	frames := make([]probe.Frame, len(pcs))
	for i, pc := range pcs {
		frames[i].Addr = pc
	}
	return frames
}

// copiedStack is the stack bytes a record copied from sp up, as the
// unwinder's memory: reads outside them fail, and the walk stops there.
type copiedStack struct {
	sp uint64
	b  []byte
}

var errNotCopied = errors.New("outside the copied stack")

func (m copiedStack) ReadAt(p []byte, addr uint64) error {
	if addr < m.sp || addr-m.sp > uint64(len(m.b)) || uint64(len(m.b))-(addr-m.sp) < uint64(len(p)) {
		return errNotCopied
	}
	copy(p, m.b[addr-m.sp:])
	return nil
}
