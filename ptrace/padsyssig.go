//go:build linux && amd64

package ptrace

import (
	"golang.org/x/sys/unix"

	"github.com/utap/utap/internal/proc"
	"github.com/utap/utap/internal/syscalls"
)

// A signal delivered to a thread at its pad's `syscall`, or just after
// it (the call returned, or was interrupted: rax -ERESTART*, -EINTR),
// moves the thread to the same place at the original `syscall`: the
// registers are the same there (the pad's point). The handler, a
// restart (the kernel moves rip back 2 bytes, onto the original, which
// then stops through the filter), glibc's cancellation (which unwinds
// from the interrupted rip: it must be in libc) all see original code.
// A call so moved after it ran writes no record: the tracer makes its
// line from the registers, as the stop path would have
// ("= ? ERESTARTSYS"). Signals elsewhere in a pad are delivered there:
// the handler returns into the pad.

// sysPadSignals is the signal owner of the system call pads; it takes
// no signal, it only moves the thread before the others look.
type sysPadSignals struct{ tr *tracer }

func (o sysPadSignals) ownSignal(s *stop) bool {
	pp := s.th.p.pads
	if pp == nil || pp.sys == nil || len(pp.sys.sites) == 0 {
		return false
	}
	if o.tr.pads.moveOut(s.th, &s.regs, true) {
		o.tr.setRegs(s.th, &s.regs)
	}
	return false
}

// padLine reports a call a pad made that the tracer took out of it, with
// its result (an interrupted call's -ERESTART*), as the stop path
// reports it at its exit.
func (sy *sysTrace) padLine(th *thread, nr int, a0, a1, a2, a3, a4, a5 uint64, ret int64, sp uint64) {
	sites := sy.byNr[nr]
	if len(sites) == 0 || !th.p.report {
		return
	}
	c := &sysCall{nr: nr, args: [6]uint64{a0, a1, a2, a3, a4, a5}, sp: sp, start: sy.tr.clock.now(), sites: sites}
	if info := syscalls.Lookup(nr); info != nil {
		c.entry = sy.capture(th.p, info, c, false, 0)
	}
	sy.exit(th, c, ret, true)
}

// sysExiting reports the call a thread dies inside (the process exits
// under it) when a pad made it: never returning, "= ?", as the stop
// path shows it. th is at its PTRACE_EVENT_EXIT stop.
func (pd *padEngine) sysExiting(th *thread) {
	pp := th.p.pads
	sy := pd.tr.sys
	if pp == nil || pp.sys == nil || len(pp.sys.sites) == 0 || sy == nil {
		return
	}
	var regs unix.PtraceRegs
	if proc.GetRegs(th.tid, &regs) != nil {
		return
	}
	s := pp.sys.sites[regs.Rip-2]
	if s == nil || len(sy.byNr[s.nr]) == 0 || !th.p.report {
		return
	}
	c := &sysCall{nr: s.nr, args: [6]uint64{regs.Rdi, regs.Rsi, regs.Rdx, regs.R10, regs.R8, regs.R9}, sp: regs.Rsp,
		start: sy.tr.clock.now(), sites: sy.byNr[s.nr]}
	if info := syscalls.Lookup(s.nr); info != nil {
		c.entry = sy.capture(th.p, info, c, false, 0)
	}
	sy.exit(th, c, 0, false)
}
