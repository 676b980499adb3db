//go:build linux && amd64

package ptrace

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/utap/utap/internal/proc"
)

// An int3 (or a single-step) raises SIGTRAP by force: if the thread
// blocks SIGTRAP or the process ignores it, the kernel sets its handler
// to SIG_DFL and takes it out of the thread's mask before we see the stop
// (force_sig_info_to_task). We swallow the trap, but the damage would
// stay: a program that blocks SIGTRAP around a probed call and raises it
// later would die of it.
//
// What the kernel leaves cannot tell that damage from a program that
// never touched SIGTRAP, so the state before each trap is kept as the
// program means it: per thread, whether it blocks SIGTRAP (read when
// probes go in, then followed by an internal breakpoint on libc's
// pthread_sigmask, which sigprocmask, sigsetmask, siglongjmp... call);
// per process, SIGTRAP's handler (read from /proc, then followed by an
// internal breakpoint on libc's sigaction, which signal, sigset... call).
// A breakpoint is the only way to learn it before the next trap: a check
// at the stop comes too late, and a timed one would miss a change made
// just before a probed call.
//
// After each of our traps, a thread that blocks SIGTRAP has it blocked
// again (PTRACE_SETSIGMASK, for such threads only). A handler the kernel
// reset is only noted: it matters once a SIGTRAP is delivered, and every
// signal passes through us first; then the handler goes back (injected
// rt_sigaction), or, ignored, the signal is discarded. A process detached
// or a fork child let go has its handler put back.
//
// The common case (SIGTRAP neither blocked nor ignored, Go's handler
// included) costs two comparisons per stop, plus one stop per call of
// libc's sigaction or pthread_sigmask. Not seen: raw rt_sigaction and
// rt_sigprocmask system calls (Go's runtime, binaries without these
// symbols), and masks set by a signal's delivery (sa_mask).

// signals keeps SIGTRAP as the program set it across our traps, and
// holds signals for a step (progress.go).
type signals struct{ tr *tracer }

// sigProc is a process's SIGTRAP state.
type sigProc struct {
	trap    trapState // SIGTRAP's action as the program set it
	scratch uint64    // a writable page for injected calls' results, 0 until needed
	// sigHooked: the hooks on sigaction and pthread_sigmask are in
	// (sigHooksKept).
	sigHooked bool
}

// sigThread is a thread's signal state.
type sigThread struct {
	// trapBlocked: the program blocks SIGTRAP in this thread, which each
	// of our traps undoes.
	trapBlocked bool
	// Progress under a signal storm (progress.go): where and how many
	// times in a row an asynchronous signal was delivered, and the one
	// held while the thread steps an instruction.
	sigRip  uint64
	sigRuns int
	held    *heldSignal
	// displaced: a held signal whose step a trap ended first (a
	// breakpoint at the next instruction), given back after that stop
	// with its siginfo (afterTrap), not sent again as the tracer's.
	displaced *proc.Siginfo
}

const (
	sigDfl    = 0
	sigIgn    = 1
	sigUnread = ^uint64(0) // caught, the handler's address not read yet
	trapBit   = 1 << (unix.SIGTRAP - 1)
)

// trapState is SIGTRAP's action as the program set it.
type trapState struct {
	handler uint64 // sigDfl, sigIgn, sigUnread or the handler's address
	reset   bool   // one of our traps made it SIG_DFL: put it back before a SIGTRAP is delivered
}

// trapTaken follows one of our traps in th (a breakpoint, a slot's end,
// a single-step, an injected call's int3).
func (sg *signals) trapTaken(th *thread) {
	p := th.p
	if th.trapBlocked {
		if m, err := proc.GetSigmask(th.tid); err == nil && m&trapBit == 0 {
			proc.SetSigmask(th.tid, m|trapBit)
		}
	}
	if p.trap.handler != sigDfl && (th.trapBlocked || p.trap.handler == sigIgn) {
		p.trap.reset = true
	}
}

// trapDelivered runs when th is about to receive a SIGTRAP that is not
// ours, and its mask or action may differ from what the program set.
func (sg *signals) trapDelivered(th *thread) {
	tr := sg.tr
	p := th.p
	var si proc.Siginfo
	if proc.GetSiginfo(th.tid, &si) != nil {
		return
	}
	if si.Code > 0 && (th.trapBlocked || p.trap.handler == sigIgn) {
		// The program's own int3 with SIGTRAP blocked or ignored: the
		// kernel has done to it what it does untraced.
		th.trapBlocked, p.trap = false, trapState{}
		return
	}
	th.trapBlocked = false // delivered: the kernel says it is not blocked
	if !p.trap.reset {
		return
	}
	if p.trap.handler == sigIgn {
		th.sig = 0 // what the ignored action does
		return
	}
	if p.holding || tr.wake.cancelled.Load() || p.trap.handler == sigUnread {
		return
	}
	tr.quiesce(p)
	defer tr.resumeAll(p)
	if tr.procs[p.pid] != p || tr.threads[th.tid] != th {
		return
	}
	if err := sg.putTrapBack(th); err != nil {
		return
	}
	// The injection's int3 is the stop th resumes from: deliver the
	// signal as it was sent.
	proc.SetSiginfo(th.tid, &si)
	th.sig = int(unix.SIGTRAP)
}

// readTrapAction reads SIGTRAP's action when the program may have set it
// without libc's sigaction; a caught one's handler is fetched with an
// injected rt_sigaction, the process quiesced unless it already is.
func (sg *signals) readTrapAction(p *process, th *thread) {
	tr := sg.tr
	if p.trap.reset {
		return // what /proc shows is our doing
	}
	ign, caught, err := trapDisposition(p.pid)
	switch {
	case err != nil:
		return
	case ign:
		p.trap.handler = sigIgn
		return
	case !caught:
		p.trap.handler = sigDfl
		return
	case p.trap.handler != sigDfl && p.trap.handler != sigIgn && p.trap.handler != sigUnread:
		return // known from its sigaction call
	}
	p.trap.handler = sigUnread
	if tr.wake.cancelled.Load() {
		return
	}
	if !p.holding {
		tr.quiesce(p)
		defer tr.resumeAll(p)
	} else if tr.running([]*process{p}) {
		return
	}
	if tr.procs[p.pid] != p {
		return
	}
	act, err := sg.trapAction(p, th, nil, false)
	if err == nil && act.handler != sigDfl {
		p.trap.handler = uint64(act.handler)
	}
}

// putTrapBack gives SIGTRAP its handler back, keeping the flags, mask and
// restorer the kernel left. Every thread of th's process is stopped.
func (sg *signals) putTrapBack(th *thread) error {
	p := th.p
	if p.trap.handler == sigUnread {
		return errUnread
	}
	act, err := sg.trapAction(p, th, nil, false)
	if err != nil {
		return err
	}
	if act.handler == sigDfl {
		act.handler = uintptr(p.trap.handler)
		// Set ignored, the call cannot end with an int3 (proc.Injection.UD2).
		if _, err := sg.trapAction(p, th, &act, p.trap.handler == sigIgn); err != nil {
			return err
		}
	}
	p.trap.reset = false
	return nil
}

// errUnread: SIGTRAP's handler could not be read before a trap reset it.
var errUnread = errors.New("SIGTRAP's handler unknown")

// trapAction runs rt_sigaction(SIGTRAP, set, &old) in the process, with
// th (or another stopped thread if th cannot) and returns old; ud ends it
// with a ud2, whose SIGILL must then be neither blocked nor ignored. The
// injections' int3s (the scratch page's mmap's too) must not reset the
// action again: SIGTRAP is unblocked in the thread meanwhile.
func (sg *signals) trapAction(p *process, th *thread, set *kernelSigaction, ud bool) (kernelSigaction, error) {
	tr := sg.tr
	var old kernelSigaction
	if th == nil || th.inSyscall || !th.stopped {
		if th = tr.injectionThread(p); th == nil {
			return old, proc.ErrGone
		}
	}
	if th.trapBlocked {
		if m, err := proc.GetSigmask(th.tid); err == nil {
			proc.SetSigmask(th.tid, m&^trapBit)
			th.trapBlocked = false
			defer func() {
				th.trapBlocked = true
				proc.SetSigmask(th.tid, m|trapBit)
			}()
		}
	}
	scratch, err := sg.scratchPage(p, th)
	if err != nil {
		return old, err
	}
	const size = unsafe.Sizeof(old)
	var setPtr uint64
	if set != nil {
		setPtr = scratch + uint64(size)
		if err := p.mem.WriteAt(unsafe.Slice((*byte)(unsafe.Pointer(set)), size), setPtr); err != nil {
			return old, err
		}
	}
	if ud {
		ill := uint64(1) << (unix.SIGILL - 1)
		m, err := proc.GetSigmask(th.tid)
		if err != nil {
			return old, err
		}
		if ign, _, err := disposition(p.pid, ill); err != nil || ign {
			return old, fmt.Errorf("pid %d: SIGILL ignored, SIGTRAP left at SIG_DFL: %w", p.pid, errUnread)
		}
		if m&ill != 0 {
			proc.SetSigmask(th.tid, m&^ill)
			defer proc.SetSigmask(th.tid, m)
		}
	}
	if _, err := tr.injectUD(th, ud, unix.SYS_RT_SIGACTION, uint64(unix.SIGTRAP), setPtr, scratch, 8); err != nil {
		return old, fmt.Errorf("pid %d: rt_sigaction(SIGTRAP): %w", p.pid, err)
	}
	err = p.mem.ReadAt(unsafe.Slice((*byte)(unsafe.Pointer(&old)), size), scratch)
	return old, err
}

// scratchPage maps, once, a page the injected rt_sigaction writes its
// result to (the SSOL areas are not writable, and no stack is safe to
// borrow: a goroutine's may end just below its stack pointer).
func (sg *signals) scratchPage(p *process, th *thread) (uint64, error) {
	tr := sg.tr
	if p.scratch != 0 {
		return p.scratch, nil
	}
	addr, err := tr.inject(th, unix.SYS_MMAP, 0, 4096, unix.PROT_READ|unix.PROT_WRITE,
		unix.MAP_PRIVATE|unix.MAP_ANONYMOUS, ^uint64(0), 0)
	if err != nil {
		return 0, fmt.Errorf("pid %d: mapping a scratch page: %w", p.pid, err)
	}
	p.scratch = addr
	return addr, nil
}

// trapCleanup puts SIGTRAP's handler back and unmaps the scratch page
// before p runs on untraced; its threads are stopped.
func (sg *signals) trapCleanup(p *process, th *thread) {
	tr := sg.tr
	if th == nil {
		return
	}
	if p.trap.reset {
		sg.putTrapBack(th)
	}
	if p.scratch != 0 {
		tr.inject(th, unix.SYS_MUNMAP, p.scratch, 4096)
		p.scratch = 0
	}
}

// trapSnapshot reads SIGTRAP's state in p, all of whose threads are
// stopped, as probes go in on a running process.
func (sg *signals) trapSnapshot(p *process, th *thread) {
	blocked := false
	for _, t := range p.threads {
		t.trapBlocked = threadBlocksTrap(t.tid)
		blocked = blocked || t.trapBlocked
	}
	if blocked {
		sg.readTrapAction(p, th)
		return
	}
	// A caught handler's address is read once some thread blocks SIGTRAP.
	switch ign, caught, err := trapDisposition(p.pid); {
	case err != nil:
	case ign:
		p.trap.handler = sigIgn
	case caught:
		p.trap.handler = sigUnread
	}
}

// maskSwaps are the system calls that run with a temporary mask: a thread
// stopped in one shows that mask, not its own.
var maskSwaps = map[uint64]bool{unix.SYS_RT_SIGSUSPEND: true, unix.SYS_PSELECT6: true, unix.SYS_PPOLL: true,
	unix.SYS_EPOLL_PWAIT: true, unix.SYS_EPOLL_PWAIT2: true, unix.SYS_RT_SIGTIMEDWAIT: true, unix.SYS_IO_PGETEVENTS: true}

// threadBlocksTrap says whether stopped tid blocks SIGTRAP.
func threadBlocksTrap(tid int) bool {
	var regs unix.PtraceRegs
	if proc.GetRegs(tid, &regs) != nil || maskSwaps[regs.Orig_rax] {
		return false
	}
	m, err := proc.GetSigmask(tid)
	return err == nil && m&trapBit != 0
}

// trapDisposition reads whether process pid ignores or catches SIGTRAP.
func trapDisposition(pid int) (ign, caught bool, err error) { return disposition(pid, trapBit) }

// disposition reads whether process pid ignores or catches the signal
// whose mask bit is bit.
func disposition(pid int, bit uint64) (ign, caught bool, err error) {
	ignored, err := proc.StatusMask(pid, "SigIgn")
	if err != nil {
		return false, false, err
	}
	handled, err := proc.StatusMask(pid, "SigCgt")
	return ignored&bit != 0, handled&bit != 0, err
}

// launchTrapState reads SIGTRAP's state in a command held at its exec,
// before its first trap: exec keeps the mask and an ignored action.
func launchTrapState(p *process, th *thread) {
	if m, err := proc.StatusMask(p.pid, "SigBlk"); err == nil {
		th.trapBlocked = m&trapBit != 0
	}
	if ign, _, err := trapDisposition(p.pid); err == nil && ign {
		p.trap.handler = sigIgn
	}
}

// ourTrapAt says whether th, stopped with regs, has just run one of our
// int3s.
func (sg *signals) ourTrapAt(th *thread, regs *unix.PtraceRegs) bool {
	p, at := th.p, regs.Rip-1
	if st := th.step; st != nil && regs.Rip == st.end() {
		return true
	}
	return p.bps[at] != nil || (p.tramp != 0 && at == p.tramp) || (p.armed && at == p.armAt) || p.removed[at]
}
