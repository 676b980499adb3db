//go:build linux && amd64

package ssol

import (
	"errors"
)

// Action is what the ptrace engine does with a probed instruction at a hit.
type Action uint8

const (
	// Emulate: the tracer performs the instruction's effect on the
	// registers (and stack) at the breakpoint stop; one stop per hit.
	Emulate Action = iota + 1
	// Boost: the slot holds the relocated instruction then a jump back to
	// the next original instruction; the tracer sets rip to the slot and
	// continues; one stop per hit. A RIP-relative Boost instruction
	// becomes Step when its slot is beyond ±2 GiB of its operand
	// (Insn.Slot settles it; Insn.ActionFor predicts it).
	Boost
	// Step: the slot holds the relocated instruction then an int3; the
	// tracer sets rip to the slot (after Insn.PreStep) and, at the second
	// stop, calls Insn.PostStep; two stops per hit.
	Step
)

// SlotSize is the size of one slot in the SSOL area.
const SlotSize = 32

// Sentinel errors; wrapped with details of the instruction.
var (
	ErrRefused    = errors.New("instruction cannot be executed out of line")
	ErrBreakpoint = errors.New("an int3 is already there")
)

// Memory is the tracee memory the emulator touches (the stack, and
// [rip+disp] for indirect call/jmp).
type Memory interface {
	ReadAt(p []byte, addr uint64) error
	WriteAt(p []byte, addr uint64) error
}

// Insn is one analysed instruction at its original address.
type Insn struct {
	Addr   uint64 // runtime address of the original instruction
	Bytes  []byte // its encoding (Len bytes)
	Action Action
	Text   string // disassembly, for messages
	// unexported fields: the relocation and emulation details
	an analysis
}
