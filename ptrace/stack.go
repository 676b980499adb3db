//go:build linux && amd64

package ptrace

import (
	"golang.org/x/sys/unix"

	"github.com/utap/utap/probe"
)

// stackOf returns the user stack of th, stopped with regs, for -k
// (Target.StackDepth): return addresses, innermost first. A slot holding
// the return trampoline (a hijacked call) shows the return address the
// thread's shadow stack keeps for it.
func (tr *tracer) stackOf(th *thread, regs *unix.PtraceRegs) []probe.Frame {
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
	pcs := tr.unwinder.Walk(p.pid, regs, p.mem, fix, tr.target.StackDepth)
	frames := make([]probe.Frame, len(pcs))
	for i, pc := range pcs {
		frames[i].Addr = pc
	}
	return frames
}

// withStack gives the events queued since mark th's stack, walked once.
func (tr *tracer) withStack(th *thread, regs *unix.PtraceRegs, mark int) {
	if tr.target.StackDepth <= 0 || mark >= len(tr.pending) {
		return
	}
	st := tr.stackOf(th, regs)
	for _, ev := range tr.pending[mark:] {
		ev.Stack = st
	}
}
