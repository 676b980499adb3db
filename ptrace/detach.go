//go:build linux && amd64

package ptrace

import (
	"github.com/utap/utap/internal/proc"
	"golang.org/x/sys/unix"
)

// detachAll stops every thread, takes every breakpoint and SSOL area out,
// moves rips out of slots and detaches: the processes run on untraced.
func (tr *tracer) detachAll() {
	tr.wake.mu.Lock()
	tr.wake.done = true
	tr.wake.mu.Unlock()
	ps := make([]*process, 0, len(tr.procs))
	for _, p := range tr.procs {
		ps = append(ps, p)
	}
	tr.quiesce(ps...)
	tr.consumeWake()
	for _, p := range ps {
		if tr.procs[p.pid] != p {
			continue
		}
		tr.detachProcess(p)
	}
}

// consumeWake makes sure the watcher's SIGSTOP, if sent, is taken before
// detaching, so that it cannot stop the process once untraced.
func (tr *tracer) consumeWake() {
	if tr.wake.sent.Load() == 0 {
		return
	}
	for range 8 {
		th := tr.threads[int(tr.wake.sent.Load())]
		if th == nil || tr.wake.consumed || th.dead || !sigPending(th.tid, unix.SIGSTOP) {
			return
		}
		th.stopped = false
		if proc.Cont(th.tid, th.sig) != nil {
			return
		}
		th.sig = 0
		tid, ws, err := proc.Wait(th.tid, 0)
		if err != nil {
			return
		}
		tr.handle(tid, ws)
	}
}

// countOverwritten counts the breakpoints of p that someone else took out
// while we traced: the kernel puts back the original byte over our int3
// when another tracer's uprobe at the same address goes, and the calls
// there are no longer seen. Said when the trace ends.
func (bk *breakpoints) countOverwritten(p *process) {
	tr := bk.tr
	var b [1]byte
	for addr, bp := range p.bps {
		if p.mem.ReadByMem(b[:], addr) == nil && b[0] != 0xcc {
			tr.overwritten = append(tr.overwritten, bp.name)
		}
	}
}

func (tr *tracer) detachProcess(p *process) {
	var regs unix.PtraceRegs
	for _, th := range p.threads {
		tr.takeLateTrap(th)
	}
	// Calls still blocking are shown as never returning, as strace
	// shows them when it detaches.
	for _, th := range p.threads {
		tr.sys.gone(th, true)
	}
	tr.out.flush()
	for _, th := range p.threads {
		if th.held != nil && th.stopped {
			tr.sigs.releaseSignal(th, 0, nil, nil)
		}
		if !th.stopped || proc.GetRegs(th.tid, &regs) != nil {
			continue
		}
		if th.step != nil {
			tr.bp.abortStep(th, &regs)
		} else if bp, ok := p.slotOf(regs.Rip); ok {
			regs.Rip = bp.in.SlotPC(regs.Rip, bp.slot)
			tr.setRegs(th, &regs)
		}
	}
	if p.shared == nil {
		tr.pads.takeOut(p, tr.injectionThread(p))
		tr.bp.countOverwritten(p)
		// Return addresses first: restoring reads the trampoline's frames.
		tr.rets.restoreReturns(p)
		for _, bp := range p.bps {
			p.mem.WriteAt([]byte{bp.orig}, bp.addr)
		}
		semsDown(p)
		if p.armed {
			p.mem.WriteAt([]byte{p.armB}, p.armAt)
			p.armed = false
		}
		if len(p.areas) > 0 {
			if th := tr.injectionThread(p); th != nil {
				for _, a := range p.areas {
					tr.inject(th, unix.SYS_MUNMAP, a.start, a.size)
				}
			}
		}
		tr.sigs.trapCleanup(p, tr.injectionThread(p))
	}
	for _, th := range p.threads {
		if th.stopped {
			sig := th.sig
			if th.listen {
				sig = 0 // stays in its group-stop
			}
			detachWith(p.pid, th.tid, sig)
		}
	}
	tr.dropProcess(p)
}

// takeLateTrap handles a thread that entered its group-stop with the
// SIGTRAP of one of our int3s still pending (get_signal takes the stop
// before dequeuing the signal): once untraced and continued, that trap
// would kill the process. The thread runs just long enough to take it,
// as a hit; detached, it rejoins the group-stop (the kernel sets
// JOBCTL_STOP_PENDING again on detach while the group-stop is in effect).
// A thread held by an interrupt with such a trap pending takes it too.
func (tr *tracer) takeLateTrap(th *thread) {
	took := false
	for range 16 {
		// A signal of the tracee's own to deliver would be lost by CONT.
		if !th.stopped || th.sig != 0 || tr.threads[th.tid] != th || !th.ourTrapPending() {
			break
		}
		th.listen, th.stopped = false, false
		if proc.Cont(th.tid, 0) != nil {
			return
		}
		took = true
		// Synchronous signals are dequeued first: the next stop is the
		// trap, unless an interrupt or a group-stop notification comes
		// first (then the trap is still pending: go round again).
		tid, ws, err := proc.Wait(th.tid, 0)
		if err != nil {
			return
		}
		tr.handle(tid, ws)
	}
	if took {
		tr.stats.lateTraps++
	}
}

// pickThread chooses a stopped thread to run injected code: never a vfork
// parent nor one inside a system call's event (inSyscall), one not in a
// group-stop if possible.
func pickThread(p *process) *thread {
	var best *thread
	for _, th := range p.threads {
		if !th.stopped || th.vfork || th.dead || th.inSyscall {
			continue
		}
		if !th.listen {
			return th
		}
		best = th
	}
	return best
}

// injectionThread is pickThread, or, when every stopped thread of p is
// inside a system call's event, one of those let out of its system call
// first.
func (tr *tracer) injectionThread(p *process) *thread {
	if th := pickThread(p); th != nil {
		return th
	}
	for _, th := range p.threads {
		if th.stopped && th.inSyscall && !th.vfork && !th.dead && tr.leaveSyscall(th) {
			return th
		}
	}
	return nil
}

// leaveSyscall resumes th, stopped at a system call's event, and stops it
// again with an interrupt once the call has returned (p is held, so every
// stop on the way is handled and kept). It reports whether th is then
// stopped outside any system call.
func (tr *tracer) leaveSyscall(th *thread) bool {
	th.stopped, th.inSyscall = false, false
	if tr.sys.cont(th, 0) != nil || proc.Interrupt(th.tid) != nil {
		th.dead = true
		return false
	}
	th.interrupted = true
	for !th.stopped || th.inSyscall {
		if th.inSyscall { // another event on the way: let it go on
			th.stopped, th.inSyscall = false, false
			tr.sys.cont(th, 0)
		}
		tid, ws, err := proc.Wait(th.tid, 0)
		if err != nil {
			return false
		}
		tr.handle(tid, ws)
		if tr.threads[th.tid] != th {
			return false // it exited
		}
	}
	return !th.dead
}

// detachWith detaches tid and hands it sig, the signal it owes the
// process. PTRACE_DETACH delivers a signal only from a signal-delivery-stop;
// from any other stop (an event stop, an interrupt, the injected munmap's
// trap) the kernel drops it, and the process would lose, say, a SIGSTOP
// sent to it while we held it. Then the signal is sent again instead.
func detachWith(pid, tid, sig int) {
	if sig != 0 {
		var si proc.Siginfo
		if proc.GetSiginfo(tid, &si) != nil || int(si.Signo) != sig || si.Code > 0 && si.Code>>8 != 0 {
			proc.Detach(tid, 0)
			unix.Tgkill(pid, tid, unix.Signal(sig))
			return
		}
	}
	proc.Detach(tid, sig)
}
