//go:build linux && amd64

package ptrace

import (
	"github.com/utap/utap/internal/rescue"
	"sync"
	"sync/atomic"

	"github.com/utap/utap/internal/proc"
	"github.com/utap/utap/probe"
	"github.com/utap/utap/ssol"
)

// tracer is the state of one Trace call. Only the locked goroutine touches
// it, except the fields under wake, which the context watcher uses.
type tracer struct {
	target probe.Target
	sites  []probe.Site

	threads map[int]*thread
	procs   map[int]*process
	early   map[int]bool // tids that stopped before their parent's clone/fork event

	leader   int   // run mode: the command's pid
	exitCode int   // its status; -1 until it exits (still running when the trace ends)
	err      error // first fatal error met while tracing
	// overwritten names breakpoints found gone at detach (countOverwritten).
	overwritten []string

	clock clock
	fast  *wakeups // nil: idle CPUs left alone (wakeup.go)
	wake  waker
	stats runStats
	poll  poller
	// shepherd: the trace was stopped while a seccomp filter is in; events
	// are dropped and the command runs to its end (seccomp.go).
	shepherd bool
	// notices are lines for Result.Notices.
	notices []string

	// The components, each owning its state (docs/internals.md).
	bp     *breakpoints // int3s, SSOL slots, stepping (hit.go)
	pads   *padEngine   // in-process pads (pads.go); their rings: package pads
	sys    *sysTrace    // system calls; nil when none is probed (syscall.go)
	rets   *returns     // return probes (ret.go)
	sigs   *signals     // SIGTRAP ownership, held signals (sigtrap.go)
	ld     *loader      // probes going in at load and dlopen (loader.go)
	stacks *stacks      // -k (stack.go)
	out    *events      // events queued at a stop, emitted after (prog.go)

	// Who owns a signal-delivery-stop, asked in order (stop.go).
	trapOwners   []trapOwner
	signalOwners []signalOwner
}

// process is one traced address space (a thread group): what the loop
// needs, then each component's own state, declared with the component.
type process struct {
	pid      int
	mem      *proc.Memory
	threads  map[int]*thread
	entry    uint64 // AT_ENTRY: scratch code for injected syscalls
	report   bool   // emit events (false for a vfork child that is not followed)
	shared   *process
	release  bool // fork child without Follow: clean and detach at its first stop
	holding  bool // quiescing: keep its threads stopped
	ourCont  bool // run mode: the SIGCONT of the launch is still to come, not the program's
	filtered bool // utap's seccomp filter is in (seccomp.go)

	bpProc   // breakpoints and SSOL areas (hit.go)
	loadProc // the loader's hook, objects seen, semaphores (loader.go)
	retProc  // return probes (ret.go)
	sigProc  // SIGTRAP's state (sigtrap.go)
	padHold  // in-process pads (pads.go)
}

// area is one SSOL mapping inside the tracee.
type area struct{ start, size uint64 }

// breakpoint is one int3 and the sites that fire at it.
type breakpoint struct {
	addr   uint64
	orig   byte
	action ssol.Action
	in     *ssol.Insn
	text   string
	name   string      // the first site's name, for errors
	code   []byte      // the original instruction's bytes (at most 16)
	slot   uint64      // slot address for Boost and Step
	slotN  int         // bytes written in the slot
	sites  []*siteProg // entry probes reported here

	hijack   *retGroup   // return probes of the function starting here (Hijack)
	enter    []*retGroup // RetProbes: calls of these open here
	rets     []*retGroup // RetProbes: calls of these return at this RET
	unwinder bool        // an unwinder's entry: restore hijacked return addresses first
	padFn    *probe.Site // an unwinder's or the loader's function, link-time (its restore or trap pad's bounds)
	loader   bool        // the loader's _dl_debug_state: rescan for dlopen/dlclose (loader.go)
	sigHook  sigHook     // libc's sigaction or pthread_sigmask: follow SIGTRAP's state (sigtrap.go)
	syncSite *probe.Site // a sync point's function, link-time: a pad or nothing (padsync.go)
	obj      object      // the object it is in: gone with it
}

// thread is one traced task: what the loop needs, then each component's
// own state, declared with the component.
type thread struct {
	tid         int
	p           *process
	stopped     bool // in a ptrace-stop we have not resumed
	sig         int  // signal to deliver when resumed
	listen      bool // in group-stop: resume with PTRACE_LISTEN
	listening   bool // resumed with PTRACE_LISTEN: reports nothing until the group-stop ends or we interrupt it
	interrupted bool // PTRACE_INTERRUPT sent, its stop not seen yet
	vfork       bool // blocked in vfork until VFORK_DONE: cannot stop
	// inSyscall: stopped at the event of a system call that has not
	// returned yet (clone, fork, vfork done): its return would overwrite
	// the registers of code injected now.
	inSyscall bool
	dead      bool // could not be interrupted: exiting

	sysThread // the probed call it is inside (syscall.go)
	bpThread  // the slot it steps (hit.go)
	retThread // its hijacked return addresses (ret.go)
	sigThread // its SIGTRAP mask, held signals (sigtrap.go)
	padThread // its fs base, vfork window (pads.go)
}

// stepping is a thread running a Step slot, or the touch code, until its
// trailing int3.
type stepping struct {
	bp       *breakpoint
	st       ssol.StepState
	deferred int // async signal held back until the step completes
	// deferredSi is its siginfo (Signo 0: not known): given back with
	// it, or the kernel makes one of its own (SI_USER from the tracer)
	// for a signal resumed at a stop of another signal (the step's trap).
	deferredSi proc.Siginfo
	more       []int // and those arriving after it
	single     bool  // a boost slot run by PTRACE_SINGLESTEP (see signalStop)
	mask       uint64
	masked     bool      // async signals blocked until the step ends; mask is the thread's own
	touch      *touching // not a slot: an emulated access made for real (touch.go)
}

// waker lets the context watcher wake the loop blocked in wait4, by a
// SIGSTOP sent to a tracee thread with tgkill that the loop recognises
// (si_pid is ours) and swallows.
type waker struct {
	mu        sync.Mutex
	target    atomic.Uint64 // tgid<<32 | tid of a live thread
	cancelled atomic.Bool
	done      bool         // loop finished: send nothing any more
	sent      atomic.Int64 // tid signalled, 0 if none
	consumed  bool
}

func newTracer(t probe.Target, sites []probe.Site, emit func(*probe.Event)) *tracer {
	sys, sites := newSysTrace(sites, t.StrSize)
	tr := &tracer{
		target:  t,
		sites:   sites,
		sys:     sys,
		threads: map[int]*thread{},
		procs:   map[int]*process{},
		early:   map[int]bool{},
		clock:   newClock(),

		exitCode: -1,
	}
	if sys != nil {
		sys.tr = tr
	}
	tr.bp = &breakpoints{tr: tr}
	tr.rets = &returns{tr: tr}
	tr.sigs = &signals{tr: tr}
	tr.ld = &loader{tr: tr, elfs: map[string]*objInfo{}}
	tr.stacks = &stacks{tr: tr}
	tr.out = &events{tr: tr, emit: emit}
	tr.trapOwners = []trapOwner{tr.bp, tr.rets, tr.ld, sysTraps{tr}}
	return tr
}

func newProcess(pid int) (*process, error) {
	mem, err := proc.OpenMemory(pid)
	if err != nil {
		return nil, err
	}
	rescue.Add(pid) // its code may get int3s
	return &process{
		pid:     pid,
		mem:     mem,
		threads: map[int]*thread{},
		bpProc:  bpProc{bps: map[uint64]*breakpoint{}, slots: map[uint64]*breakpoint{}, removed: map[uint64]bool{}},
		report:  true,
	}, nil
}

func (tr *tracer) addThread(p *process, tid int) *thread {
	th := &thread{tid: tid, p: p}
	p.threads[tid] = th
	tr.threads[tid] = th
	tr.wake.target.Store(uint64(p.pid)<<32 | uint64(tid))
	return th
}

func (tr *tracer) dropThread(th *thread) {
	delete(th.p.threads, th.tid)
	delete(tr.threads, th.tid)
}

func (tr *tracer) dropProcess(p *process) {
	tr.pads.vforkEnd(p.vforkWin)
	if p.shared == nil {
		tr.pads.ringGone(p)
	}
	for _, th := range p.threads {
		delete(tr.threads, th.tid)
	}
	p.threads = map[int]*thread{}
	p.mem.Close()
	delete(tr.procs, p.pid)
	rescue.Remove(p.pid)
	// The watcher needs some live thread to signal.
	for _, th := range tr.threads {
		tr.wake.target.Store(uint64(th.p.pid)<<32 | uint64(th.tid))
		break
	}
}

// slotOf returns the breakpoint whose slot holds rip, if any.
func (p *process) slotOf(rip uint64) (*breakpoint, bool) {
	for _, a := range p.areas {
		if rip >= a.start && rip < a.start+a.size {
			bp, ok := p.slots[rip-(rip-a.start)%ssol.SlotSize]
			return bp, ok
		}
	}
	return nil, false
}
