//go:build linux && amd64

package ptrace

import (
	"errors"
	"github.com/utap/utap/internal/rescue"
	"maps"
	"slices"

	"github.com/utap/utap/internal/proc"
	"github.com/utap/utap/probe"
	"golang.org/x/sys/unix"
)

// loop handles stops until every traced process is gone or the context
// is cancelled, then takes everything out and detaches.
func (tr *tracer) loop() {
	for len(tr.procs) > 0 {
		if tr.wake.cancelled.Load() && tr.err == nil && tr.sys.filtered() {
			// The filter stays with the command: so does the tracer,
			// silent, until the command exits (seccomp.go).
			tr.shepherd = true
			tr.pads.d.Mute() // its pads' records are dropped too
		} else if tr.wake.cancelled.Load() || tr.err != nil {
			if tr.err != nil {
				doom(tr.leader)
			}
			tr.detachAll()
			return
		}
		var tid int
		var ws unix.WaitStatus
		var err error
		if tr.allListening() {
			tid, ws, err = tr.nextListening()
		} else {
			tid, ws, err = tr.next()
		}
		if tid == 0 && err == nil {
			continue // cancelled
		}
		if err != nil {
			if err != unix.ECHILD {
				tr.fail(err)
			}
			return
		}
		tr.handle(tid, ws)
	}
}

func (tr *tracer) fail(err error) {
	if tr.err == nil && err != nil {
		tr.err = err
	}
}

// handle classifies one wait status and, unless the thread's process is
// being quiesced, resumes the thread; then it emits the events reported.
func (tr *tracer) handle(tid int, ws unix.WaitStatus) {
	tr.handleStop(tid, ws)
	tr.out.flush()
}

func (tr *tracer) handleStop(tid int, ws unix.WaitStatus) {
	th := tr.threads[tid]
	if ws.Exited() || ws.Signaled() {
		tr.exited(tid, th, ws)
		return
	}
	if !ws.Stopped() {
		return
	}
	if th == nil {
		// A new thread or child reporting before its parent's clone/fork
		// event: it stays stopped until the parent's event adopts it.
		tr.early[tid] = true
		return
	}
	th.stopped, th.listening = true, false
	tr.stats.stops++
	tr.fast.stopped()
	sig := int(ws.StopSignal())
	ev := proc.Event(ws)
	th.inSyscall = ev == unix.PTRACE_EVENT_CLONE || ev == unix.PTRACE_EVENT_FORK || ev == unix.PTRACE_EVENT_VFORK ||
		ev == unix.PTRACE_EVENT_VFORK_DONE
	if ev != 0 {
		th.sigRuns = 0 // it got somewhere
		if th.held != nil {
			tr.sigs.releaseSignal(th, 0, nil, nil)
		}
	}
	switch ev {
	case 0:
		if sig == proc.SyscallStopSig && tr.sys != nil {
			tr.sys.syscallStop(th)
			break
		}
		tr.signalStop(th, sig)
		if th.sig != 0 && tr.target.ProcessEvents && th.p.report {
			tr.sigs.signalEvent(th)
		}
		if th.sig == int(unix.SIGTRAP) && (th.p.trap.reset || th.trapBlocked) {
			tr.sigs.trapDelivered(th)
		}
	case unix.PTRACE_EVENT_STOP:
		tr.eventStop(th, sig)
	case unix.PTRACE_EVENT_CLONE, unix.PTRACE_EVENT_FORK, unix.PTRACE_EVENT_VFORK:
		tr.newChild(th, ev)
	case unix.PTRACE_EVENT_VFORK_DONE:
		th.vfork = false
		tr.pads.vforkEnd(th.vforkWin)
		th.vforkWin = nil
		vforkShadowBack(th)
	case unix.PTRACE_EVENT_SECCOMP:
		if tr.sys != nil {
			tr.sys.syscallStop(th)
		}
	case unix.PTRACE_EVENT_EXEC:
		tr.exec(th)
		return
	case unix.PTRACE_EVENT_EXIT:
		tr.pads.sysExiting(th)
	}
	if th.p.release {
		tr.releaseChild(th.p)
		return
	}
	if !th.p.holding {
		tr.resume(th)
	}
}

// eventStop is PTRACE_EVENT_STOP: our interrupt, a new thread's first
// stop, or a group-stop (a stop signal).
func (tr *tracer) eventStop(th *thread, sig int) {
	// A group-stop report also takes our pending interrupt (one
	// JOBCTL_TRAP_STOP for both): left set, the next quiesce would not
	// interrupt this thread and would wait for it forever.
	th.interrupted = false
	switch unix.Signal(sig) {
	case unix.SIGSTOP, unix.SIGTSTP, unix.SIGTTIN, unix.SIGTTOU:
		th.listen = true
		return
	}
	if !th.p.holding || len(th.p.bps) == 0 {
		return
	}
	// A thread that has just executed an int3 can report the interrupt
	// first, with the breakpoint's SIGTRAP still queued: let it take that
	// trap now, as a hit, rather than find a removed breakpoint later.
	if th.ourTrapPending() {
		th.stopped = false
		tr.sys.cont(th, 0)
	}
}

// ourTrapPending reports whether a stopped thread has a SIGTRAP of ours
// queued, not taken yet: it executed one of our int3s (a breakpoint, the
// trampoline, a Step slot's end) or single-stepped a slot, then stopped
// for something else first. Detached with it, the thread would die of it.
func (th *thread) ourTrapPending() bool {
	if !sigPending(th.tid, unix.SIGTRAP) {
		return false
	}
	var regs unix.PtraceRegs
	if proc.GetRegs(th.tid, &regs) != nil {
		return false
	}
	p := th.p
	if st := th.step; st != nil && (st.single || regs.Rip == st.end()) || th.sysStep != nil {
		return true
	}
	_, ok := p.bps[regs.Rip-1]
	return ok || (p.tramp != 0 && regs.Rip-1 == p.tramp) || p.trapAt(regs.Rip-1) != nil
}

// resume restarts a stopped thread with its recorded action.
func (tr *tracer) resume(th *thread) {
	if !th.stopped {
		return
	}
	if tr.pads != nil && tr.pads.sync && len(tr.out.pending) > 0 {
		// On the command's terminal, a stop's lines go before the
		// thread runs on: what it prints next comes after them.
		tr.out.flush()
	}
	if th.p.pads != nil && (!th.fsKnown || th.p.pads.newRing) {
		tr.pads.beforeRun(th)
	}
	th.stopped, th.inSyscall = false, false
	var err error
	if th.listen {
		th.listen, th.listening = false, true
		err = proc.Listen(th.tid)
	} else {
		sig := th.sig
		th.sig = 0
		if (th.step != nil && th.step.single) || th.held != nil || th.sysStep != nil {
			err = proc.Step(th.tid, sig)
		} else {
			err = tr.sys.cont(th, sig)
		}
	}
	if err != nil && !errors.Is(err, unix.ESRCH) {
		tr.fail(err)
	}
}

// exited records a thread's death; the leader's death ends its process.
func (tr *tracer) exited(tid int, th *thread, ws unix.WaitStatus) {
	delete(tr.early, tid)
	if th == nil {
		return
	}
	p := th.p
	tr.sys.gone(th, false)
	if tr.target.ProcessEvents && p.report {
		// strace -f shows every thread's end.
		tr.out.queue(&probe.Event{TimeNs: tr.clock.now(), PID: p.pid, TID: tid, Kind: "exit", Status: int(ws)})
	}
	tr.dropThread(th)
	if tid != p.pid {
		return
	}
	if tid == tr.leader {
		if ws.Signaled() {
			tr.exitCode = 128 + int(ws.Signal())
		} else {
			tr.exitCode = ws.ExitStatus()
		}
	}
	tr.dropProcess(p)
}

// newChild adopts the task a clone, fork or vfork created.
func (tr *tracer) newChild(th *thread, ev int) {
	msg, err := proc.EventMsg(th.tid)
	if err != nil {
		return
	}
	tid := int(msg)
	p := th.p
	var nt *thread
	if ev == unix.PTRACE_EVENT_CLONE {
		if nt = tr.threads[tid]; nt == nil {
			nt = tr.addThread(p, tid)
		}
		// pthread_create gives the thread its creator's mask (after
		// starting it with all signals blocked, by a raw system call).
		nt.trapBlocked = th.trapBlocked
	} else {
		// The child's thread returns through the forking thread's frames.
		var inherited *shadowStack
		if th.shadow != nil && th.shadow.Len() > 0 {
			inherited = th.shadow.Clone()
		}
		np, err := newProcess(tid)
		if err != nil {
			tr.fail(err)
			return
		}
		np.entry, np.sigHooked, np.filtered = p.entry, p.sigHooked, p.filtered
		if np.filtered {
			rescue.Filtered(tid) // the filter is inherited
		}
		np.trap, np.scratch = p.trap, p.scratch
		// Clipped: a group the child adds (at a dlopen) must not land in
		// the parent's array.
		np.tramp, np.groups, np.seen = p.tramp, slices.Clip(p.groups), maps.Clone(p.seen)
		if p.calls != nil {
			np.calls = newCallPairs(retLimit)
		}
		switch {
		case ev == unix.PTRACE_EVENT_VFORK:
			// Shared memory: the child sees (and may hit) the parent's
			// breakpoints until it execs or exits; write nothing for it.
			np.shared, np.bps, np.slots, np.removed, np.areas, np.sems = p, p.bps, p.slots, p.removed, p.areas, p.sems
			// Its pads' records go to the parent's ring, with the
			// parent's thread's fs base: told apart by when they came.
			np.pads = p.pads
			np.report = tr.target.Follow
			th.vfork = true
			tr.pads.vforkBegin(th, np)
		case tr.target.Follow || p.filtered:
			// fork copied the int3 bytes and the SSOL area: same tables.
			// (The seccomp filter too: a child not asked for is traced,
			// silently, for it would fail the filtered calls untraced.)
			np.report = tr.target.Follow
			for a, bp := range p.bps {
				np.bps[a] = bp
			}
			for a, bp := range p.slots {
				np.slots[a] = bp
			}
			for a := range p.removed {
				np.removed[a] = true
			}
			np.areas = append([]area(nil), p.areas...)
			// and the semaphores' increments, taken back at its detach.
			np.sems = maps.Clone(p.sems)
			np.pads = p.pads.forked(true)
			tr.pads.forkOrder(np)
		default:
			// Its memory holds our int3s and semaphore increments, which
			// releaseChild takes out of it.
			np.bps, np.slots, np.areas, np.sems = p.bps, p.slots, p.areas, p.sems
			np.pads = p.pads.forked(false)
			np.release = true
			np.inherit = inherited
			inherited = nil
		}
		tr.procs[tid] = np
		nt = tr.addThread(np, tid)
		// A vfork child's fs base is its parent's thread's, which
		// keeps it (vforkBegin).
		nt.fsKnown = ev == unix.PTRACE_EVENT_VFORK
		nt.shadow = inherited
		nt.trapBlocked = th.trapBlocked
	}
	if tr.early[tid] {
		// Its first stop came before this event: handle it now.
		delete(tr.early, tid)
		nt.stopped = true
		if nt.p.release {
			tr.releaseChild(nt.p)
		} else if !nt.p.holding {
			tr.resume(nt)
		}
	}
}

// releaseChild cleans a forked child that is not followed: the original
// bytes go back, the SSOL area is unmapped, and it runs on untraced.
func (tr *tracer) releaseChild(p *process) {
	th := p.threads[p.pid]
	if th == nil || !th.stopped {
		return
	}
	for _, bp := range p.bps {
		p.mem.WriteAt([]byte{bp.orig}, bp.addr)
	}
	tr.pads.takeOut(p, th)
	semsDown(p)
	if p.armed {
		p.mem.WriteAt([]byte{p.armB}, p.armAt)
	}
	if p.inherit != nil {
		var regs unix.PtraceRegs
		if proc.GetRegs(th.tid, &regs) == nil {
			p.inherit.Restore(p.mem, regs.Rsp)
		}
	}
	for _, a := range p.areas {
		tr.inject(th, unix.SYS_MUNMAP, a.start, a.size)
	}
	tr.sigs.trapCleanup(p, th)
	proc.Detach(th.tid, th.sig)
	tr.dropProcess(p)
}

// exec drops a process's tables (its image is new) and arms armLoaded so
// probes go in once the loader has mapped the libraries.
func (tr *tracer) exec(th *thread) {
	p := th.p
	if old, err := proc.EventMsg(th.tid); err == nil && int(old) != th.tid {
		if ot := tr.threads[int(old)]; ot != nil {
			// The execve was this thread's call: it returns as the leader.
			th.call, ot.call = ot.call, nil
			tr.dropThread(ot)
		}
	}
	// Every other thread is gone; their exits may still be reported.
	for _, ot := range p.threads {
		if ot != th {
			tr.dropThread(ot)
		}
	}
	if p.shared == nil {
		tr.pads.ringGone(p) // gone with the old image, as its pads
	}
	p.pads = nil
	th.fsKnown = false
	p.mem.Close()
	mem, err := proc.OpenMemory(p.pid)
	if err != nil {
		tr.fail(err)
		return
	}
	p.mem = mem
	tr.stacks.unwinder.Maps.Forget(p.pid)
	p.bps, p.slots, p.removed, p.areas = map[uint64]*breakpoint{}, map[uint64]*breakpoint{}, map[uint64]bool{}, nil
	p.armed = false
	p.tramp, p.groups, p.calls, p.inherit, th.shadow = 0, nil, nil, nil, nil
	p.seen = nil
	// A new image: the old counters are gone with it (a new map, not
	// cleared: a vfork child shares its parent's).
	p.sems = nil
	// exec makes caught signals default; an ignored one stays ignored.
	if p.trap.handler != sigIgn {
		p.trap = trapState{}
	}
	p.scratch, p.sigHooked = 0, false
	vforked := p.shared != nil
	p.shared = nil
	tr.pads.vforkEnd(p.vforkWin)
	p.vforkWin = nil
	if vforked && !p.report && !p.filtered {
		// A vfork child that is not followed: its new image has no probes.
		proc.Detach(th.tid, 0)
		tr.dropProcess(p)
		return
	}
	if err := tr.ld.armLoaded(p); err != nil {
		tr.fail(err)
	}
	tr.resume(th)
}

// armLoaded puts a temporary int3 where the probes go in (atLoaded): the
// loader's rendezvous, hit with a complete link map once every library is
// mapped and relocated and before any constructor runs; or, for a program
// without a loader, its entry point.
func (ld *loader) armLoaded(p *process) error {
	entry, err := proc.Entry(p.pid)
	if err != nil {
		return err
	}
	at, rv := entry, (*proc.Rendezvous)(nil)
	if r, err := proc.LoaderRendezvous(p.pid); err == nil && r.BrkReturns {
		at, rv = r.Brk, &r
	}
	var b [1]byte
	if err := p.mem.ReadByMem(b[:], at); err != nil {
		return err
	}
	if err := p.mem.WriteAt([]byte{0xcc}, at); err != nil {
		return err
	}
	p.entry, p.armAt, p.armB, p.armRV, p.armed = entry, at, b[0], rv, true
	return nil
}
