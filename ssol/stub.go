package ssol

import "golang.org/x/sys/unix"

// analysis holds what Analyze learned about an instruction.
// TEMPORARY STUB: the ssol implementer replaces this file.
type analysis struct{}

// Analyze decodes the instruction at the start of code, which sits at
// runtime address addr, and classifies it. Refused instructions return an
// error wrapping ErrRefused that names the instruction and the reason.
func Analyze(code []byte, addr uint64) (*Insn, error) { panic("ssol: not implemented") }

// Slot returns the bytes to write into the slot at slotAddr (at most
// SlotSize) for Boost and Step instructions.
func (in *Insn) Slot(slotAddr uint64) ([]byte, error) { panic("ssol: not implemented") }

// Emulate applies an Emulate instruction's effect to regs (rip included),
// reading and writing the stack through mem.
func (in *Insn) Emulate(regs *unix.PtraceRegs, mem Memory) error { panic("ssol: not implemented") }

// PreStep prepares regs to run a Step slot at slotAddr (scratch register
// loaded, rip set to the slot). It returns the state PostStep needs.
func (in *Insn) PreStep(regs *unix.PtraceRegs, slotAddr uint64) StepState {
	panic("ssol: not implemented")
}

// PostStep fixes regs after the Step slot's trailing int3 trapped (scratch
// register restored, rip = Addr+len, pushed return addresses fixed).
func (in *Insn) PostStep(regs *unix.PtraceRegs, st StepState, mem Memory) error {
	panic("ssol: not implemented")
}

// SlotPC maps a rip inside the instruction's slot back to the equivalent
// original address (slot start → Addr; after the copy → Addr+len), for a
// signal that arrives while a thread runs in the slot.
func (in *Insn) SlotPC(rip, slotAddr uint64) uint64 { panic("ssol: not implemented") }

// StepState is the per-thread state a Step instruction keeps between its
// two stops (the scratch register's saved value).
type StepState struct {
	Scratch    int // register index, -1 if none
	SavedValue uint64
}
