//go:build linux && amd64

package ptrace

import (
	"github.com/utap/utap/internal/proc"
	"github.com/utap/utap/internal/ustack"
	"golang.org/x/sys/unix"

	"github.com/utap/utap/probe"
)

// stacks walks user stacks for -k (Target.StackDepth).
type stacks struct {
	tr       *tracer
	unwinder ustack.Unwinder
}

// stackOf returns the user stack of th, stopped with regs, for -k
// (Target.StackDepth): return addresses, innermost first. A slot holding
// the return trampoline (a hijacked call) shows the return address the
// thread's shadow stack keeps for it.
func (sk *stacks) stackOf(th *thread, regs *unix.PtraceRegs) []probe.Frame {
	tr := sk.tr
	p := th.p
	var fix func(slot, ra uint64) uint64
	if p.tramp != 0 {
		fix = func(slot, ra uint64) uint64 {
			if ra != p.tramp || th.shadow == nil {
				return ra
			}
			fs := th.shadow.Frames()
			for i := len(fs) - 1; i >= 0; i-- {
				if fs[i].SP == slot {
					return fs[i].OrigRet
				}
			}
			return ra
		}
	}
	pcs := sk.unwinder.Walk(p.pid, regs, p.mem, fix, tr.target.StackDepth)
	frames := make([]probe.Frame, len(pcs))
	for i, pc := range pcs {
		frames[i].Addr = pc
	}
	return frames
}

// withStack gives the events queued since mark th's stack, walked once.
func (sk *stacks) withStack(th *thread, regs *unix.PtraceRegs, mark int) {
	tr := sk.tr
	if tr.target.StackDepth <= 0 || mark >= len(sk.tr.out.pending) {
		return
	}
	st := sk.stackOf(th, regs)
	for _, ev := range sk.tr.out.pending[mark:] {
		ev.Stack = st
	}
}

// atSyscall returns th's user stack at a system call's entry (strace -k),
// nil without -k. The walk starts at the instruction after the syscall.
func (sk *stacks) atSyscall(th *thread) []probe.Frame {
	if sk.tr.target.StackDepth <= 0 {
		return nil
	}
	var regs unix.PtraceRegs
	if proc.GetRegs(th.tid, &regs) != nil {
		return nil
	}
	return sk.stackOf(th, &regs)
}
