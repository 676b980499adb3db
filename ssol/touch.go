//go:build linux && amd64

package ssol

import "golang.org/x/sys/unix"

// Access is how an emulated instruction reaches memory: the kind of
// instruction the tracee runs to make a failed access for real (Touch).
type Access uint8

const (
	AccessPush Access = iota + 1 // an 8-byte store at rsp-8 (call, push)
	AccessPop                    // an 8-byte load at rsp (ret)
	AccessLoad                   // an 8-byte load at an address (call or jmp through memory)
)

// touchCode holds one entry per Access, each one instruction then an
// int3: push %rax; pop %rax; mov (%rax),%rax. push and pop run at the
// thread's own rsp, so a non-canonical one raises what the real stack
// access would (#SS, not #GP).
var touchCode = []byte{0x50, 0xcc, 0x58, 0xcc, 0x48, 0x8b, 0x00, 0xcc}

// touchEntry is each Access's offset in touchCode and the length of its
// instruction.
var touchEntry = [...]struct{ off, n uint64 }{AccessPush: {0, 1}, AccessPop: {2, 1}, AccessLoad: {4, 3}}

// TouchCode is the code Touch runs: the engine places it, executable, in
// the tracee (at most 16 bytes, position-independent, shared by threads).
func TouchCode() []byte { return touchCode }

// Touch sets regs, the registers the emulation started from, to make the
// tracee itself repeat e's access with the code TouchCode placed at code,
// and returns the rip the thread stops at once the access went through
// (after the int3). Only the process's own access makes the kernel grow
// a stack, or raises the fault the CPU would (si_addr, si_code); a tracer's
// write through ptrace does neither. The registers are the engine's to
// put back, and the emulation to redo.
func (e *FaultError) Touch(regs *unix.PtraceRegs, code uint64) (end uint64) {
	t := touchEntry[e.Access]
	regs.Rip = code + t.off
	if e.Access == AccessLoad {
		regs.Rax = e.Addr
	}
	return regs.Rip + t.n + 1
}

// Accesses says whether the instruction's emulation reads or writes
// memory, which may need Touch.
func (in *Insn) Accesses() bool {
	e := &in.an.emu
	if in.Action != Emulate {
		return false
	}
	switch e.kind {
	case emCall, emRet, emPush, emCallInd:
		return true
	case emJmpInd:
		return e.reg == noReg
	}
	return false
}
