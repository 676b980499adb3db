//go:build linux && amd64

package ptrace

import (
	"golang.org/x/sys/unix"

	"github.com/utap/utap/internal/proc"
)

// A signal that comes faster than a stop round trip (a 20 µs interval
// timer; a stop costs 15–30 µs here) leaves the traced thread no time of
// its own: each delivery stops it, its handler runs, and by its return the
// next one is pending, so the program never gets past the instruction it
// was interrupted at. Untraced, delivery costs a microsecond or two and the
// program runs on between signals.
//
// So the third delivery in a row at the same address, with no other stop
// between, waits one instruction: the thread steps it with asynchronous
// signals blocked, and the signal is then delivered as it came (siginfo
// kept). Signals stay asynchronous, a program gets at least one
// instruction per delivery, and a trace under a signal storm finishes.

const (
	stuckAfter = 3 // deliveries in a row at one address
	// A single-step's trap: TRAP_TRACE, or TRAP_BRKPT when the step was
	// over a system call (reported at its exit).
	trapBrkpt, trapTrace = 1, 2
)

// heldSignal is a signal held while its thread steps one instruction.
type heldSignal struct {
	si   proc.Siginfo
	mask uint64 // the thread's own mask, put back after the step
}

// stuck counts an asynchronous signal about to be delivered to th at rip
// and says whether th has made no progress since the last ones.
func (th *thread) stuck(rip uint64, runs int) bool {
	if rip != th.sigRip {
		th.sigRip, runs = rip, 0
	}
	th.sigRuns = runs + 1
	return th.sigRuns >= stuckAfter
}

// stepFirst holds the signal in si and makes th step one instruction
// before it is delivered; false if th's mask cannot be changed (deliver
// at once, then).
func stepFirst(th *thread, si *proc.Siginfo) bool {
	m, err := proc.BlockAsync(th.tid)
	if err != nil {
		return false
	}
	th.held, th.sigRuns = &heldSignal{si: *si, mask: m}, 0
	return true
}

// releaseSignal ends th's held state at its next stop: the mask goes back,
// and the signal is delivered now if this stop is the step's own trap, or
// queued again otherwise (another stop came first: a breakpoint, an event).
// It reports whether the stop was the step's trap.
func (sg *signals) releaseSignal(th *thread, sig int, si *proc.Siginfo, regs *unix.PtraceRegs) bool {
	h := th.held
	th.held = nil
	proc.SetSigmask(th.tid, h.mask)
	if sig == int(unix.SIGTRAP) && si != nil && (si.Code == trapTrace || si.Code == trapBrkpt) {
		if si.Code == trapBrkpt && regs != nil {
			sg.tr.sys.steppedOver(th, regs)
		}
		// Same signal number, so the kernel keeps the siginfo we set.
		proc.SetSiginfo(th.tid, &h.si)
		th.sig = int(h.si.Signo)
		return true
	}
	if sig == int(unix.SIGTRAP) && si != nil {
		th.displaced = &h.si // a trap first: given back after it (afterTrap)
		return false
	}
	resend(th.p.pid, th.tid, int(h.si.Signo))
	return false
}

// afterTrap gives back a held signal a trap displaced (releaseSignal),
// once the trap's stop is handled: held again with its siginfo when the
// trap started a slot step, delivered at this stop when nothing else is
// (the same signal number as the siginfo set: the kernel keeps it), sent
// again otherwise.
func (sg *signals) afterTrap(th *thread) {
	si := th.displaced
	if si == nil {
		return
	}
	th.displaced = nil
	sig := int(si.Signo)
	switch st := th.step; {
	case st != nil && st.deferred == 0:
		st.hold(sig, si)
		holdSignals(th, st)
	case st == nil && th.sig == 0 && th.held == nil && th.sysStep == nil && proc.SetSiginfo(th.tid, si) == nil:
		th.sig = sig
	default:
		resend(th.p.pid, th.tid, sig)
	}
}

// ownSignal makes a thread that an asynchronous signal keeps at one
// instruction step it first (stepFirst); the signal is delivered after.
func (sg *signals) ownSignal(s *stop) bool {
	return !syncFault(s.sig, &s.si) && s.th.stuck(s.regs.Rip, s.runs) && stepFirst(s.th, &s.si)
}

// before takes the stop that ends a held signal's step; and, when our
// int3 met the program's own SIGTRAP, blocked and pending, it makes the
// stop ours: the kernel unblocked the program's, and ours merged into it.
// The trap is taken; the program's, sent again once the stop is handled
// (resend), goes back to pending once blocked again (its sender is lost).
func (sg *signals) before(s *stop) (took, resend bool) {
	th := s.th
	if th.held != nil && sg.releaseSignal(th, s.sig, &s.si, &s.regs) {
		return true, false
	}
	if s.sig == int(unix.SIGTRAP) && s.si.Code <= 0 && th.trapBlocked && sg.ourTrapAt(th, &s.regs) {
		s.si.Code = proc.SIKernel
		return false, true
	}
	return false, false
}
