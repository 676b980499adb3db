//go:build linux && amd64

package ptrace

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/utap/utap/ssol"
)

// An emulated call, push or ret reaches the stack through ptrace, which is
// not the process's own access: the kernel grows a stack only on a fault
// in the process's context (a call in a 1 MiB frame, deep recursion), and
// only the CPU knows the fault an access raises (unmapped, the stack's
// guard gap, a read-only page: si_code, si_addr, the frame's error code).
// uprobes emulate with copy_to_user in the task's context and get both.
// So when an emulated access fails, the thread makes that access itself,
// with one instruction of the same kind in the touch code (slot 0 of the
// first SSOL area): if it goes through, the stack has grown and the
// emulation is redone; if it faults, the fault is delivered as the kernel
// raised it, at the probed instruction with its registers, where the CPU
// would have left it. Running the instruction itself from a slot is not
// possible: a call's target and return address are not relocatable.

// touchOff is the touch code's offset in the first area, in slot 0 after
// the trampoline's int3.
const touchOff = 16

// touching is a thread in the touch code.
type touching struct {
	before unix.PtraceRegs // at the breakpoint, as the emulation started
	fault  ssol.FaultError // the access being made
	end    uint64          // rip after the touch's int3
}

// end is the rip at which a stepping thread stops when done.
func (st *stepping) end() uint64 {
	if st.touch != nil {
		return st.touch.end
	}
	return st.bp.slot + uint64(st.bp.slotN)
}

// slotZero fills slot 0 of an SSOL area: int3s, the first the return
// trampoline, with the touch code at touchOff.
func slotZero() []byte {
	b := make([]byte, ssol.SlotSize)
	for i := range b {
		b[i] = 0xcc
	}
	copy(b[touchOff:], ssol.TouchCode())
	return b
}

// emulate applies bp's emulated instruction to regs, or starts a touch of
// the access it could not make. prev is the access a touch has just made:
// failing again there is not the CPU's doing, but the tracer's.
func (bk *breakpoints) emulate(th *thread, bp *breakpoint, regs *unix.PtraceRegs, prev *ssol.FaultError) {
	tr := bk.tr
	before := *regs
	err := bp.in.Emulate(regs, asProgram{th.p.mem})
	if err == nil {
		return
	}
	var fe *ssol.FaultError
	if errors.As(err, &fe) && th.p.tramp != 0 && (prev == nil || prev.Addr != fe.Addr || prev.Access != fe.Access) {
		*regs = before
		bk.startTouch(th, bp, regs, fe)
		return
	}
	tr.fail(fmt.Errorf("pid %d: %w", th.p.pid, err))
}

// startTouch points th, stopped at bp with regs, at the touch code for
// fe's access; signalStop sees it end (touchDone) or fault (abortStep).
func (bk *breakpoints) startTouch(th *thread, bp *breakpoint, regs *unix.PtraceRegs, fe *ssol.FaultError) {
	t := &touching{before: *regs, fault: *fe}
	t.end = fe.Touch(regs, th.p.tramp+touchOff)
	st := &stepping{bp: bp, st: ssol.StepState{Scratch: -1}, touch: t}
	if th.sig != 0 {
		// A signal to deliver (a previous touch's held one) waits for
		// the instruction: delivered in the touch code, its frame would
		// resume there.
		st.deferred, th.sig = th.sig, 0
		holdSignals(th, st)
	}
	th.step = st
}

// touchDone: the touch's access went through (a stack grew); th goes back
// to the breakpoint's registers and the emulation is redone.
func (bk *breakpoints) touchDone(th *thread, regs *unix.PtraceRegs) {
	tr := bk.tr
	st := th.step
	th.step = nil
	*regs = st.touch.before
	bk.releaseHeld(th, st)
	bk.emulate(th, st.bp, regs, &st.touch.fault)
	tr.setRegs(th, regs)
}
