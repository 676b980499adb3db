package ptrace

import (
	"golang.org/x/sys/unix"

	"github.com/utap/utap/ssol"
)

// relocatable is what the engine needs of an analysed instruction: the
// method set of *ssol.Insn, named so tests can run before ssol lands.
type relocatable interface {
	Slot(slotAddr uint64) ([]byte, error)
	ActionFor(slotAddr uint64) ssol.Action
	Emulate(regs *unix.PtraceRegs, mem ssol.Memory) error
	PreStep(regs *unix.PtraceRegs, slotAddr uint64) ssol.StepState
	PostStep(regs *unix.PtraceRegs, st ssol.StepState, mem ssol.Memory) error
	SlotPC(rip, slotAddr uint64) uint64
}

// analyze classifies the instruction at the start of code, at runtime
// address addr. A variable so tests can substitute a minimal analyser.
var analyze = func(code []byte, addr uint64) (ssol.Action, string, relocatable, error) {
	in, err := ssol.Analyze(code, addr)
	if err != nil {
		return 0, "", nil, err
	}
	return in.Action, in.Text, in, nil
}
