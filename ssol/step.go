//go:build linux && amd64

package ssol

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// StepState is the per-thread state a Step instruction keeps between its
// two stops (the scratch register's saved value).
type StepState struct {
	Scratch    int // register index, -1 if none
	SavedValue uint64
}

// PreStep prepares regs to run a Step slot at slotAddr (scratch register
// loaded with Addr+len, so that [scratch+disp32] is the original
// [rip+disp32]; rip set to the slot). It returns the state PostStep needs.
// Only Step instructions touch a scratch register; call Slot first, which
// settles the action for the slot's address.
func (in *Insn) PreStep(regs *unix.PtraceRegs, slotAddr uint64) StepState {
	st := StepState{Scratch: -1}
	if in.Action == Step && in.an.scratch >= 0 {
		r := gpr(regs, in.an.scratch)
		st.Scratch, st.SavedValue = in.an.scratch, *r
		*r = in.Addr + uint64(len(in.Bytes))
	}
	regs.Rip = slotAddr
	return st
}

// PostStep fixes regs after the Step slot's trailing int3 trapped (scratch
// register restored, rip = Addr+len). Calls and pushes never run from a
// slot (they are emulated), so no return address on the stack needs fixing
// and mem is not touched.
func (in *Insn) PostStep(regs *unix.PtraceRegs, st StepState, mem Memory) error {
	if st.Scratch >= 16 {
		return fmt.Errorf("ssol: bad step state for %s at %#x: scratch register %d", in.Text, in.Addr, st.Scratch)
	}
	if st.Scratch >= 0 {
		*gpr(regs, st.Scratch) = st.SavedValue
	}
	regs.Rip = in.Addr + uint64(len(in.Bytes))
	return nil
}
