//go:build linux && amd64

package uprobe

import (
	"encoding/binary"

	"github.com/cilium/ebpf/asm"
	"github.com/utap/utap/probe"
)

// -k: the user stack at the probe, bpf_get_stack(ctx, buf, size,
// BPF_F_USER_STACK), after the fetch slots of the record:
//
//	s64 bpf_get_stack's result (bytes written, or -errno)
//	u64 × depth return addresses, innermost first, the probed pc first
//
// Records without -k keep their layout (stackOff 0). The kernel walks
// user stacks by frame pointers only: through code built without them
// (most distributions' libc) the walk stops early or goes astray where the
// ptrace engine, unwinding with DWARF CFI, goes on.

const bpfFUserStack = 1 << 8 // BPF_F_USER_STACK

// reserveStack places the stack area at the end of p's record.
func reserveStack(p *program, depth int) {
	if depth <= 0 {
		return
	}
	p.stackOff = p.size
	p.stackLen = 8 * depth
	p.size += 8 + p.stackLen
}

// storeStack fills the stack area of the record R7 points to; R6 is the
// program's context.
func (g *progGen) storeStack(p *program) {
	if p.stackOff == 0 {
		return
	}
	g.emit(
		asm.Mov.Reg(asm.R1, asm.R6),
		asm.Mov.Reg(asm.R2, asm.R7),
		asm.Add.Imm(asm.R2, int32(p.stackOff+8)),
		asm.Mov.Imm(asm.R3, int32(p.stackLen)),
		asm.Mov.Imm(asm.R4, bpfFUserStack),
		asm.FnGetStack.Call(),
		asm.StoreMem(asm.R7, int16(p.stackOff), asm.R0, asm.DWord),
	)
}

// decodeStack returns the stack of a record of p, nil without one.
func decodeStack(raw []byte, p *program) []probe.Frame {
	if p.stackOff == 0 {
		return nil
	}
	le := binary.LittleEndian
	n := int64(le.Uint64(raw[p.stackOff:]))
	if n <= 0 {
		return nil
	}
	n = min(n, int64(p.stackLen)) / 8
	frames := make([]probe.Frame, 0, n)
	for i := range int(n) {
		a := le.Uint64(raw[p.stackOff+8+8*i:])
		if a == 0 {
			break
		}
		frames = append(frames, probe.Frame{Addr: a})
	}
	return frames
}
