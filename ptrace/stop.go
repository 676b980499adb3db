//go:build linux && amd64

package ptrace

import (
	"os"

	"golang.org/x/sys/unix"

	"github.com/utap/utap/internal/proc"
)

// The loop hands each signal-delivery-stop to the component that owns it.
// A SIGTRAP goes first to the trap owners, in order (breakpoints, returns,
// the loader): each takes the traps of its own int3s. Any other signal,
// or a trap no one took, goes to the signal owners, in order (returns,
// pads, breakpoints, signals): each takes a signal that lands in its code
// or its state, or leaves it. A signal no one takes is delivered as it came.

// stop is one signal-delivery-stop, as the owners see it.
type stop struct {
	th   *thread
	sig  int
	si   proc.Siginfo
	regs unix.PtraceRegs
	// runs is how many times in a row a signal was delivered at this
	// rip before (progress.go).
	runs int
}

// kernelTrap says whether the stop is an int3's SIGTRAP.
func (s *stop) kernelTrap() bool { return s.sig == int(unix.SIGTRAP) && s.si.Code == proc.SIKernel }

// trapOwner takes the SIGTRAPs of its int3s and single-steps.
type trapOwner interface{ ownTrap(s *stop) bool }

// signalOwner takes the signals that land in its code or its state.
type signalOwner interface{ ownSignal(s *stop) bool }

// signalStop handles a signal-delivery-stop: one of our traps, the
// watcher's wake-up, or the tracee's own signal, re-injected as it came.
func (tr *tracer) signalStop(th *thread, sig int) {
	s := &stop{th: th, sig: sig}
	if proc.GetSiginfo(th.tid, &s.si) != nil || proc.GetRegs(th.tid, &s.regs) != nil {
		th.sig = sig
		return
	}
	s.runs = th.sigRuns
	th.sigRuns = 0
	defer tr.sigs.afterTrap(th)
	took, resend := tr.sigs.before(s)
	if resend {
		defer unix.Tgkill(th.p.pid, th.tid, unix.SIGTRAP)
	}
	if took {
		return
	}
	if sig == int(unix.SIGTRAP) {
		for _, o := range tr.trapOwners {
			if o.ownTrap(s) {
				return
			}
		}
	}
	if tr.wakeStop(th, sig, &s.si) {
		return
	}
	for _, o := range tr.signalOwners {
		if o.ownSignal(s) {
			return
		}
	}
	th.sig = sig
}

// wakeStop takes the watcher's wake-up SIGSTOP (engine.go) at its
// delivery to th, with siginfo si: true when it was that, consumed. It is
// sent once, so taken once: a SIGSTOP the tracer held and sent again
// (resend) must reach the process.
func (tr *tracer) wakeStop(th *thread, sig int, si *proc.Siginfo) bool {
	if sig == int(unix.SIGSTOP) && si.Code == proc.SITkill && si.Pid() == os.Getpid() && tr.wake.cancelled.Load() && int64(th.tid) == tr.wake.sent.Load() && !tr.wake.consumed {
		tr.wake.consumed = true
		return true
	}
	return false
}

// syncFault tells a fault raised by an instruction from a signal sent by
// someone (si_code <= 0) or raised asynchronously.
func syncFault(sig int, si *proc.Siginfo) bool {
	switch unix.Signal(sig) {
	case unix.SIGSEGV, unix.SIGBUS, unix.SIGFPE, unix.SIGILL:
		return si.Code > 0
	}
	return false
}

// resend queues sig for tid again, a signal the tracer held back (a step
// out of a slot or a pad, an injection). A SIGSTOP goes to the process,
// which it stops whole either way: sent to the thread from here, it was
// the watcher's wake-up's twin (wakeStop took it for that, and a stop
// the user sent was lost), and merged with the wake-up while both were
// pending.
func resend(pid, tid, sig int) {
	if sig == int(unix.SIGSTOP) {
		unix.Kill(pid, unix.SIGSTOP)
		return
	}
	unix.Tgkill(pid, tid, unix.Signal(sig))
}
