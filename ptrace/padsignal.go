//go:build linux && amd64

package ptrace

import (
	"golang.org/x/sys/unix"

	"github.com/utap/utap/internal/proc"
)

// An asynchronous signal that lands inside a pad is not delivered there:
// the thread first runs out of the pad, its asynchronous signals blocked,
// and the signal is delivered where the pad returns. A pad is then one
// step of the program, as a breakpoint's hit is: a handler never sees a
// pad's rip (a profiler's sample, a backtrace), and under a signal storm
// (a 10 µs timer, each delivery a stop longer than the interval) the
// thread is not left to cross the pad's hundred instructions one per
// third delivery (progress.go), where a breakpoint's hit is one stop.
// A signal that lands outside a pad costs nothing more than without pads.
//
// The thread runs to the pad's return under a hardware breakpoint (DR0,
// one stop; when the pad ends in a displaced jmp, call or ret, to the end of
// its probe code, the rest single-stepped); without a debug register
// every instruction is stepped (a hundred stops).

// maxPadSteps bounds the single-steps out of a pad: its code is straight,
// a few hundred instructions at most, then the displaced ones and a jump.
const maxPadSteps = 4096

// dr7Exec0 enables DR0 as a local execution breakpoint (length and type 0).
const dr7Exec0 = 1

// escape takes th, stopped for async signal sig (siginfo si) with regs
// inside a pad, out of the pad, then has the signal delivered there.
func (pd *padEngine) escape(th *thread, regs *unix.PtraceRegs, sig int, si *proc.Siginfo) {
	tr := pd.tr
	tr.stats.padEscapes++
	mask, err := proc.BlockAsync(th.tid)
	if err != nil {
		th.sig = sig
		return
	}
	th.sigRuns = 0
	defer tr.sigs.trapTaken(th)
	pp := th.p.pads
	ps := pp.padOf(regs.Rip)
	if trapAhead(ps, regs.Rip) {
		// Its int3 stops the run or a step, as any: the loader's
		// rescan is owed once out.
		defer func() {
			if th.stopped && !th.dead {
				tr.ld.rescan(th)
			}
		}()
	}
	if ps != nil {
		if to := padExit(ps, regs.Rip); to != 0 && !pd.runTo(th, to, mask, sig) {
			return
		}
	}
	for range maxPadSteps {
		if proc.GetRegs(th.tid, regs) != nil || !pp.inPad(regs.Rip) {
			break
		}
		tr.stats.padSteps++
		if proc.Step(th.tid, 0) != nil || !pd.wait(th, mask, sig) {
			return
		}
	}
	// Stopped by our SIGTRAP: a signal of the same number set there keeps
	// the siginfo set (releaseSignal's way).
	proc.SetSigmask(th.tid, mask)
	proc.SetSiginfo(th.tid, si)
	th.sig = sig
}

// padExit is where a thread at rip in ps's pad is run to: the site's
// next instruction, where the pad jumps back, unless the last displaced
// instruction is a jmp, call or ret (the pad goes elsewhere); then the end
// of the probe code, the rest stepped. 0: step from here.
func padExit(ps *padSite, rip uint64) uint64 {
	if ps.disp.FallsThrough() {
		return ps.addr + uint64(ps.disp.Len)
	}
	if end := ps.pad + uint64(ps.lay.Displaced); rip < end {
		return end
	}
	return 0
}

// runTo runs th to addr under a hardware breakpoint; false if th is no
// longer stopped here (gone, or handed to the loop). A debug register
// refused leaves th where it was, to be stepped.
func (pd *padEngine) runTo(th *thread, addr uint64, mask uint64, sig int) bool {
	tr := pd.tr
	if proc.SetDebugReg(th.tid, 0, addr) != nil || proc.SetDebugReg(th.tid, 7, dr7Exec0) != nil {
		return true
	}
	tr.stats.padRuns++
	ok := proc.Cont(th.tid, 0) == nil && pd.wait(th, mask, sig)
	if ok || !th.dead {
		proc.SetDebugReg(th.tid, 7, 0)
		proc.SetDebugReg(th.tid, 6, 0)
	}
	return ok
}

// stepWhile single-steps th while its rip is in (at most maxPadSteps),
// with pd's wait: false when it did not stop where wait wants (gone,
// another stop).
func stepWhile(pd *padEngine, th *thread, mask uint64, sig int, in func(rip uint64) bool) bool {
	var regs unix.PtraceRegs
	for range maxPadSteps {
		if proc.GetRegs(th.tid, &regs) != nil || !in(regs.Rip) {
			return true
		}
		pd.tr.stats.padSteps++
		if proc.Step(th.tid, 0) != nil || !pd.wait(th, mask, sig) {
			return false
		}
	}
	return true
}

// wait waits for th's stop after a step or run in a pad: true at a
// SIGTRAP (the step's, the breakpoint's). A thread that died is reported
// gone; another stop (a fault in the pad, fault's) is the loop's, the
// held signal pending again behind it.
func (pd *padEngine) wait(th *thread, mask uint64, sig int) bool {
	tr := pd.tr
	_, ws, err := proc.Wait(th.tid, 0)
	switch {
	case err != nil:
		return false
	case ws.Exited() || ws.Signaled():
		th.dead = true
		tr.exited(th.tid, th, ws)
		th.stopped = false
		return false
	case ws.Stopped() && ws.StopSignal() == unix.SIGTRAP && proc.Event(ws) == 0:
		return true
	}
	proc.SetDebugReg(th.tid, 7, 0)
	proc.SetSigmask(th.tid, mask)
	resend(th.p.pid, th.tid, sig)
	tr.handleStop(th.tid, ws)
	return false
}
