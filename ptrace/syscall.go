//go:build linux && amd64

package ptrace

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/utap/utap/internal/proc"
	"github.com/utap/utap/internal/syscalls"
	"github.com/utap/utap/probe"
)

// sysTrace is the system call side of a trace: the calls probed, and how
// threads are resumed so that their syscall-stops come. Without a seccomp
// filter every thread runs under PTRACE_SYSCALL and stops at every call;
// with one (run mode, seccomp.go) only the probed calls stop, at entry
// (PTRACE_EVENT_SECCOMP), and the thread is then resumed with
// PTRACE_SYSCALL to see that call's exit.
type sysTrace struct {
	tr       *tracer
	byNr     map[int][]*probe.Site
	all      bool // every call is probed
	noFilter bool // never use one (--no-seccomp)
	noGate   bool // no calls in-process (padsys.go): -k, whose stack is read at a stop
	trapMode bool // pads and traps (padsystrap.go), a filter only where they cannot see every call
	gate     *sysGate
	strsize  int
	// dispatch: the numbers a dispatch pad sends on (dispatchNrs), nil
	// when none can be (padsyswatch.go).
	dispatch []int
}

// sysThread is the probed system call a thread is inside, nil if none.
type sysThread struct {
	call *sysCall
	// sysNext: resumed from a trap (padsystrap.go) into a call it must
	// see, under PTRACE_SYSCALL.
	sysNext bool
	// sysStep: single-stepping the `syscall` of this trap's trampoline,
	// a probed call open (padsystrap.go).
	sysStep *sysTrap
}

// sysCall is a probed call a thread is inside: its entry is seen, its
// exit not yet.
type sysCall struct {
	nr       int
	args     [6]uint64
	sp       uint64 // the stack pointer at entry (rt_sigreturn's frame)
	start    int64
	entry    [][]byte
	sites    []*probe.Site
	entered  bool          // an entry event was queued: the writer shows it pending
	detached bool          // the trace ends while it runs (gone)
	stack    []probe.Frame // -k: the user stack at entry, shared by its events
}

// newSysTrace takes the system call sites out of sites; nil when none.
func newSysTrace(sites []probe.Site, strsize int) (*sysTrace, []probe.Site) {
	var st *sysTrace
	var rest []probe.Site
	for i := range sites {
		s := &sites[i]
		if !s.Syscall {
			rest = append(rest, *s)
			continue
		}
		if st == nil {
			if strsize <= 0 {
				strsize = syscalls.DefaultStrSize
			}
			st = &sysTrace{byNr: map[int][]*probe.Site{}, strsize: strsize}
		}
		st.byNr[s.SyscallNr] = append(st.byNr[s.SyscallNr], s)
	}
	if st != nil {
		st.all = len(st.byNr) >= len(syscalls.All())
		st.dispatch = st.dispatchable()
	}
	return st, rest
}

// cont resumes th, delivering sig, so that the syscall-stops it owes come:
// every call's, unless a filter or traps make its probed calls stop.
func (sy *sysTrace) cont(th *thread, sig int) error {
	if sy != nil && (th.call != nil || th.sysNext || !th.p.filtered && !th.p.quiet()) {
		return proc.ContSyscall(th.tid, sig)
	}
	return proc.Cont(th.tid, sig)
}

// syscallStop handles a syscall-stop or a seccomp stop of th.
func (sy *sysTrace) syscallStop(th *thread) {
	// Injected code must not run from here: the call's return would
	// overwrite its registers (inject.go).
	th.inSyscall = true
	var si proc.SyscallInfo
	if proc.GetSyscallInfo(th.tid, &si) != nil {
		return
	}
	switch si.Op {
	case unix.PTRACE_SYSCALL_INFO_ENTRY, unix.PTRACE_SYSCALL_INFO_SECCOMP:
		sy.enter(th, &si)
	case unix.PTRACE_SYSCALL_INFO_EXIT:
		if c := th.call; c != nil && !sy.detachStop(si.Ret()) {
			th.call = nil
			sy.exit(th, c, si.Ret(), true)
		}
	}
}

func (sy *sysTrace) enter(th *thread, si *proc.SyscallInfo) {
	tr := sy.tr
	th.call, th.sysNext = nil, false
	sy.tr.pads.filterComing(th, si.Nr(), si.Args)
	sites := sy.byNr[si.Nr()]
	if len(sites) == 0 || !th.p.report {
		return
	}
	c := &sysCall{nr: si.Nr(), args: si.Args, sp: si.SP, start: tr.clock.now(), sites: sites}
	c.stack = tr.stacks.atSyscall(th)
	info := syscalls.Lookup(c.nr)
	if info != nil {
		c.entry = sy.capture(th.p, info, c, false, 0)
	}
	if info != nil && info.NoReturn {
		// exit, exit_group: nothing follows but the thread's end, so the
		// line ends now, "= ?", as strace ends it.
		sy.exit(th, c, 0, false)
		return
	}
	th.call = c
	// An entry event lets the writer show a call that blocks while
	// others run (<unfinished ...>); a condition is known only at exit.
	for _, s := range sites {
		if syscalls.Plain(s) {
			ev := sy.event(th, s, c, "entry")
			ev.TimeNs = c.start
			tr.out.queue(ev)
			c.entered = true
			break
		}
	}
}

// exit reports a probed call once it returned (or its thread left it
// for good: ret is then meaningless and returned false).
func (sy *sysTrace) exit(th *thread, c *sysCall, ret int64, returned bool) {
	tr := sy.tr
	now := tr.clock.now()
	info := syscalls.Lookup(c.nr)
	var exit [][]byte
	if returned && info != nil {
		exit = sy.capture(th.p, info, c, true, ret)
	}
	env := &syscalls.Env{Call: &probe.Syscall{Nr: c.nr, Args: c.args, Ret: ret}, PID: th.p.pid, TID: th.tid, Mem: th.p.readMem}
	report := func(s *probe.Site) {
		ev := sy.event(th, s, c, "return")
		ev.TimeNs, ev.DurationNs = now, now-c.start
		ev.Sys.Ret, ev.Sys.Returned, ev.Sys.Exit, ev.Sys.Detached = ret, returned, exit, c.detached
		for _, f := range s.Fetches {
			ev.Args = append(ev.Args, probe.FetchValue(f, env))
		}
		tr.out.queue(ev)
	}
	// Every spec with a condition or fetches reports the call when its
	// condition holds; a plain selection (-S, -e trace=) only when none
	// did, so a call is one line unless asked for twice.
	reported := false
	for _, s := range c.sites {
		if syscalls.Plain(s) || !probe.EvalCond(s.Cond, env) {
			continue
		}
		report(s)
		reported = true
	}
	if !reported {
		for _, s := range c.sites {
			if syscalls.Plain(s) {
				report(s)
				return
			}
		}
	}
}

func (sy *sysTrace) event(th *thread, s *probe.Site, c *sysCall, kind string) *probe.Event {
	ev := baseEvent(th, s, kind)
	ev.Sys = &probe.Syscall{Nr: c.nr, Args: c.args, Entry: c.entry}
	ev.Stack = c.stack
	return ev
}

// gone reports the call th was inside as never returning: the thread
// exited (exit_group), or the trace ends while it blocks (detached).
func (sy *sysTrace) gone(th *thread, detached bool) {
	if c := th.call; c != nil {
		th.call = nil
		c.detached = detached
		sy.exit(th, c, 0, false)
	}
}

// detachStop says whether a system call's exit with ret is the trace's
// end interrupting it (the watcher's wake-up, the threads stopped to
// detach): the kernel restarts it once the thread runs on, so it did
// not return; its line ends <detached ...> (gone), not with the restart
// code strace shows for a signal's interruption.
func (sy *sysTrace) detachStop(ret int64) bool {
	return restarting(ret) && sy.tr.wake.cancelled.Load()
}

// capture reads the memory info's line needs, at entry or at exit.
func (sy *sysTrace) capture(p *process, info *syscalls.Info, c *sysCall, exit bool, ret int64) [][]byte {
	return syscalls.ReadSide(info, c.args, ret, c.sp, exit, sy.strsize, p.readMem)
}

// readMem reads p's memory in the argument order of syscalls.ReadFunc
// and probe.Env.Read.
func (p *process) readMem(addr uint64, b []byte) error { return p.mem.ReadAt(b, addr) }

// seizeOptions are the ptrace options of every tracee of this trace.
func (sy *sysTrace) seizeOptions() int {
	if sy != nil {
		return proc.SeizeOptions | proc.SyscallOptions
	}
	return proc.SeizeOptions
}

// signalEvent reports the signal th is about to be given (strace's
// "--- SIGCHLD {...} ---" line), with its siginfo.
func (sg *signals) signalEvent(th *thread) {
	tr := sg.tr
	var si proc.Siginfo
	if proc.GetSiginfo(th.tid, &si) != nil {
		return
	}
	if p := th.p; p.ourCont && th.sig == int(unix.SIGCONT) && si.Code == proc.SIUser && si.Pid() == os.Getpid() {
		p.ourCont = false // the launch's own (launch.go), not the program's
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(&si)), unsafe.Sizeof(si))
	tr.out.queue(&probe.Event{TimeNs: tr.clock.now(), PID: th.p.pid, TID: th.tid, Kind: "signal",
		Func: unix.SignalName(unix.Signal(th.sig)), Signal: append([]byte(nil), b...)})
}

// execLine reports the execve that started the command held at its exec
// (syscalls.ExecCall), when a probe selects execve.
func (sy *sysTrace) execLine(th *thread) {
	tr := sy.tr
	sites := sy.byNr[unix.SYS_EXECVE]
	if len(sites) == 0 {
		return
	}
	sp, execfn, err := proc.ExecStack(th.tid, th.p.pid)
	if err != nil {
		return
	}
	call := syscalls.ExecCall(sp, execfn, sy.strsize, th.p.readMem)
	if call == nil {
		return
	}
	c := &sysCall{nr: call.Nr, args: call.Args, start: tr.clock.now(), entry: call.Entry, sites: sites}
	sy.exit(th, c, 0, true)
}

// steppedOver reports a probed call a thread made while single-stepped
// (progress.go's step under a signal storm), which gives no syscall-stop:
// its line is made from the registers at the step's trap, as padLine
// makes a pad's. Not one a pad recorded, nor one the filter stopped.
func (sy *sysTrace) steppedOver(th *thread, regs *unix.PtraceRegs) {
	if sy == nil || th.p.filtered || th.call != nil {
		return
	}
	if pp := th.p.pads; pp != nil && pp.sys != nil && pp.sys.sites[regs.Rip-2] != nil {
		return
	}
	nr := int(int64(regs.Orig_rax))
	if nr < 0 {
		return
	}
	th.sysNext = false
	sy.padLine(th, nr, regs.Rdi, regs.Rsi, regs.Rdx, regs.R10, regs.R8, regs.R9, int64(regs.Rax), regs.Rsp)
}
