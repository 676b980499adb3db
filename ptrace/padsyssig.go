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
	pd := o.tr.pads
	th := s.th
	if th.sysStep != nil {
		o.tr.sys.trapSignal(s)
		return false
	}
	pp := th.p.pads
	if pp == nil || pp.sys == nil || len(pp.sys.sites) == 0 && len(pp.sys.traps) == 0 {
		return false
	}
	if !o.tr.sys.gateOf().holds(s.regs.Rip) {
		return false
	}
	if pd.moveOut(th, &s.regs, true) {
		o.tr.setRegs(th, &s.regs)
		return false
	}
	site := pp.sys.holding(s.regs.Rip)
	if site == nil || syncFault(s.sig, &s.si) || s.kernelTrap() {
		return false
	}
	// An asynchronous signal elsewhere in the pad: the thread runs, its
	// asynchronous signals blocked, to its `syscall` (then moved to the
	// original's) or, past it, to where the pad returns (padsignal.go's
	// way), and the signal is delivered there.
	to := site.sc + 2
	if s.regs.Rip < site.pad {
		to = site.pad
	}
	if site.dispatch {
		to = site.tsc // its comparisons: moveOut's then
	}
	mask, err := proc.BlockAsync(th.tid)
	if err != nil {
		return false
	}
	if s.regs.Rip < site.pad && site.branches {
		// A displaced conditional branch may leave the pad (to the
		// original code): stepped, to the pad's `syscall` or out.
		if !stepWhile(pd, th, mask, s.sig, func(rip uint64) bool { return rip >= site.padAt && rip < to }) {
			return true
		}
	} else if !pd.runTo(th, to, mask, s.sig) {
		return true // gone, or another stop the loop took, the signal pending again
	}
	proc.SetSigmask(th.tid, mask)
	proc.SetSiginfo(th.tid, &s.si)
	if proc.GetRegs(th.tid, &s.regs) == nil && pd.moveOut(th, &s.regs, true) {
		o.tr.setRegs(th, &s.regs)
	}
	return false
}

// holding is the site whose pad holds rip, nil if none.
func (sp *sysPads) holding(rip uint64) *sysSite {
	if sp == nil {
		return nil
	}
	for _, s := range sp.sites {
		if rip >= s.padAt && rip < s.padAt+uint64(s.padLen) {
			return s
		}
	}
	return nil
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
	c := &sysCall{nr: s.nr, args: callArgs(&regs), sp: regs.Rsp,
		start: sy.tr.clock.now(), sites: sy.byNr[s.nr]}
	if info := syscalls.Lookup(s.nr); info != nil {
		c.entry = sy.capture(th.p, info, c, false, 0)
	}
	sy.exit(th, c, 0, false)
}
