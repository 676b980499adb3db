//go:build linux && amd64

package ptrace

import (
	"fmt"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/utap/utap/internal/proc"
	"github.com/utap/utap/ssol"
)

// breakpoints is the int3 side: hits, their displaced instructions
// emulated or run in SSOL slots, stepping, and their installation.
type breakpoints struct{ tr *tracer }

// bpProc is a process's breakpoints.
type bpProc struct {
	bps     map[uint64]*breakpoint // by runtime address
	slots   map[uint64]*breakpoint // by slot address
	removed map[uint64]bool        // addresses of breakpoints taken out: a late trap there is swallowed
	areas   []area                 // SSOL areas
}

// bpThread is a thread's stepping of a slot (or the touch code).
type bpThread struct{ step *stepping }

// fixFaultAddr rewrites a si_addr that points into a slot to the
// original instruction's address.
func (bk *breakpoints) fixFaultAddr(th *thread, si *proc.Siginfo, bp *breakpoint) {
	if si.Addr >= bp.slot && si.Addr < bp.slot+ssol.SlotSize {
		si.Addr = bp.in.SlotPC(si.Addr, bp.slot)
		proc.SetSiginfo(th.tid, si)
	}
}

func (tr *tracer) setRegs(th *thread, regs *unix.PtraceRegs) {
	if err := proc.SetRegs(th.tid, regs); err != nil && err != unix.ESRCH {
		tr.fail(err)
	}
}

// hit reports a breakpoint hit and sets the thread up to run the
// displaced instruction: emulated now, or from its slot.
func (bk *breakpoints) hit(th *thread, bp *breakpoint, regs *unix.PtraceRegs) {
	tr := bk.tr
	regs.Rip = bp.addr
	p := th.p
	if p.report {
		bk.report(th, bp, regs)
	}
	tr.rets.retHit(th, bp, regs)
	switch bp.action {
	case ssol.Emulate:
		bk.emulate(th, bp, regs, nil) // or a touch of its access (touch.go)
	case ssol.Boost:
		regs.Rip = bp.slot
	case ssol.Step:
		st := bp.in.PreStep(regs, bp.slot)
		regs.Rip = bp.slot
		th.step = &stepping{bp: bp, st: st}
	}
	tr.setRegs(th, regs)
}

// asProgram is tracee memory as the program's own instructions reach it:
// a write to a page it cannot write fails, where /proc/PID/mem would make
// it (an emulated push onto a read-only or PROT_NONE stack page).
type asProgram struct{ *proc.Memory }

func (m asProgram) WriteAt(p []byte, addr uint64) error { return m.WriteChecked(p, addr) }

// stepDone finishes a Step slot at its trailing int3.
func (bk *breakpoints) stepDone(th *thread, regs *unix.PtraceRegs) {
	tr := bk.tr
	st := th.step
	th.step = nil
	if err := st.bp.in.PostStep(regs, st.st, th.p.mem); err != nil {
		tr.fail(fmt.Errorf("pid %d: after %s at %#x: %w", th.p.pid, st.bp.text, st.bp.addr, err))
	}
	tr.setRegs(th, regs)
	bk.releaseHeld(th, st)
}

// releaseHeld hands back the signals held during st's step: the first to
// deliver as th resumes, the others queued again (the step is over, so
// they no longer come back before it).
func (bk *breakpoints) releaseHeld(th *thread, st *stepping) {
	if st.masked {
		proc.SetSigmask(th.tid, st.mask)
	}
	th.sig = st.deferred
	if th.sig != 0 && st.deferredSi.Signo != 0 {
		// Same signal number as the siginfo: the kernel keeps it, and
		// the program gets the sender, code and fields it was sent with
		// (a SIGCHLD's child and status), the trace its line.
		proc.SetSiginfo(th.tid, &st.deferredSi)
	}
	for _, s := range st.more {
		resend(th.p.pid, th.tid, s)
	}
}

// hold makes sig, with its siginfo si, the signal delivered when st's
// step ends (releaseHeld).
func (st *stepping) hold(sig int, si *proc.Siginfo) { st.deferred, st.deferredSi = sig, *si }

// holdSignals blocks th's asynchronous signals until st's step ends, once
// one came before it: a periodic signal (a 20 µs timer) would otherwise be
// pending again at every resume, dequeued before the slot ran, for ever.
// Blocked, they wait in the kernel, merged or queued as untraced.
func holdSignals(th *thread, st *stepping) {
	if st.masked {
		return
	}
	if m, err := proc.BlockAsync(th.tid); err == nil {
		st.mask, st.masked = m, true
	}
}

// sigRTMin is the first real-time signal: those queue, one per kill.
const sigRTMin = 32

// holds says whether sig is among the signals held during the step.
func (st *stepping) holds(sig int) bool {
	return st.deferred == sig || slices.Contains(st.more, sig)
}

// singleDone finishes a boosted instruction single-stepped in its slot:
// rip goes to the equivalent original address and the held signal is
// delivered there.
func (bk *breakpoints) singleDone(th *thread, regs *unix.PtraceRegs) {
	tr := bk.tr
	st := th.step
	th.step = nil
	regs.Rip = st.bp.in.SlotPC(regs.Rip, st.bp.slot)
	tr.setRegs(th, regs)
	bk.releaseHeld(th, st)
}

// isPushf tells pushf (9c, maybe after 66 or REX), which would push the
// trap flag of a single-step.
func isPushf(code []byte) bool {
	for _, b := range code {
		if b == 0x66 || b&0xf0 == 0x40 {
			continue
		}
		return b == 0x9c
	}
	return false
}

// abortStep moves a thread that has not run its Step slot (or touch) back
// to the original instruction, undoing PreStep.
func (bk *breakpoints) abortStep(th *thread, regs *unix.PtraceRegs) {
	tr := bk.tr
	st := th.step
	th.step = nil
	if st.touch != nil {
		*regs = st.touch.before
	} else {
		regs.Rip = st.bp.in.SlotPC(regs.Rip, st.bp.slot)
	}
	if st.st.Scratch >= 0 {
		setReg(regs, st.st.Scratch, st.st.SavedValue)
	}
	tr.setRegs(th, regs)
	bk.releaseHeld(th, st)
}

// report queues one event per site at bp whose condition holds.
func (bk *breakpoints) report(th *thread, bp *breakpoint, regs *unix.PtraceRegs) {
	tr := bk.tr
	env := tr.out.hitEnvFor(th, regs)
	var now int64
	defer tr.stacks.withStack(th, regs, len(tr.out.pending))
	for _, sp := range bp.sites {
		ev := tr.out.newEvent(th, sp, env, "entry")
		if ev == nil {
			continue
		}
		if now == 0 {
			now = tr.clock.now()
		}
		ev.TimeNs = now
		tr.out.queue(ev)
	}
}

// ownTrap takes the traps of the breakpoints: a single-stepped slot's, a
// Step slot's or touch's trailing int3, a hit, a late trap of one taken
// out since.
func (bk *breakpoints) ownTrap(s *stop) bool {
	tr, th, regs := bk.tr, s.th, &s.regs
	p := th.p
	if st := th.step; st != nil && st.single && s.si.Code > 0 && regs.Rip != st.bp.slot {
		bk.singleDone(th, regs)
		tr.sigs.trapTaken(th)
		return true
	}
	if !s.kernelTrap() {
		return false
	}
	if st := th.step; st != nil && regs.Rip == st.end() {
		if st.touch != nil {
			bk.touchDone(th, regs)
		} else {
			bk.stepDone(th, regs)
		}
		tr.sigs.trapTaken(th)
		return true
	}
	if bp := p.bps[regs.Rip-1]; bp != nil {
		var args unix.PtraceRegs
		if bp.sigHook != 0 {
			args = *regs
		}
		bk.hit(th, bp, regs)
		tr.sigs.trapTaken(th)
		// Internal breakpoints: their owners follow the call.
		if bp.loader {
			tr.ld.rescan(th)
		}
		if bp.sigHook != 0 {
			tr.sigs.sigCall(th, bp.sigHook, &args)
		}
		return true
	}
	if p.removed[regs.Rip-1] {
		// A late trap from a breakpoint taken out since: run the
		// original instruction.
		regs.Rip--
		tr.setRegs(th, regs)
		tr.sigs.trapTaken(th)
		return true
	}
	return false
}

// ownSignal takes a signal that comes while a thread steps a slot or a
// touch (held, or a fault of the instruction), and puts a thread stopped
// inside a slot back at the original instruction.
func (bk *breakpoints) ownSignal(s *stop) bool {
	tr, th, regs, si, sig := bk.tr, s.th, &s.regs, &s.si, s.sig
	p := th.p
	if st := th.step; st != nil {
		if !syncFault(sig, si) {
			// uprobes' deny-signal: hold it until the slot's int3. Sent
			// again now, a signal would be dequeued again before the slot
			// ran, for ever under a flood (a livelock): held too, and sent
			// again once the step is over. A standard signal already held
			// merges with it, as the kernel merges a pending one.
			if st.deferred == 0 {
				st.hold(sig, si)
			} else if sig >= sigRTMin || !st.holds(sig) {
				st.more = append(st.more, sig)
			}
			holdSignals(th, st)
			return true
		}
		// The slot instruction faulted: deliver the fault at the original
		// address, as if it had run there; the signals held come after.
		// A touch's fault is the emulated instruction's own, as raised.
		bk.abortStep(th, regs)
		if th.sig != 0 {
			resend(p.pid, th.tid, th.sig)
		}
		if st.touch == nil {
			bk.fixFaultAddr(th, si, st.bp)
		}
		th.sig = sig
		return true
	}
	bp, ok := p.slotOf(regs.Rip)
	if !ok {
		return false
	}
	if regs.Rip == bp.slot && !syncFault(sig, si) {
		// An async signal before a boosted instruction ran: its hit is
		// reported already, so moving rip back would report it twice
		// (on whichever thread the handler's return lands, in Go).
		// Single-step the slot instead, then deliver the signal.
		if !isPushf(bp.code) {
			th.step = &stepping{bp: bp, st: ssol.StepState{Scratch: -1}, single: true}
			th.step.hold(sig, si)
			holdSignals(th, th.step)
			return true
		}
		// pushf would push the trap flag: deliver in the slot.
		th.sig = sig
		return true
	}
	regs.Rip = bp.in.SlotPC(regs.Rip, bp.slot)
	tr.setRegs(th, regs)
	if syncFault(sig, si) {
		bk.fixFaultAddr(th, si, bp)
	}
	return false // delivered, where the signal owners say
}
