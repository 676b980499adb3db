//go:build linux && amd64

package ptrace

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/utap/utap/internal/proc"
	"github.com/utap/utap/probe"
	"github.com/utap/utap/ptrace/pads"
)

// Engine is the ptrace breakpoint engine.
type Engine struct {
	// SlowWakeups leaves idle CPUs halting even while stops come fast
	// (wakeup.go): stops cost more, idle CPUs burn nothing.
	SlowWakeups bool
	// NoSeccomp: no seccomp filter for system call probes (seccomp.go).
	NoSeccomp bool
	// NoPads keeps every site an int3: no in-process pads (pads.go).
	NoPads bool
	// Lossy: a pad that finds its ring full drops the event (counted)
	// instead of waiting for the tracer to make room.
	Lossy bool
	// Sync: each in-process record waits until the tracer has read it
	// (probe.Config.Sync).
	Sync bool
	// Verbose receives a line per probe site saying how it is placed (a
	// pad, or a breakpoint and why); nil drops them.
	Verbose func(string)
	// Info receives a line when idle CPUs are first asked to poll; nil
	// drops it.
	Info func(string)

	stats *runStats // tests and benchmarks: filled in when Trace returns
}

// runStats counts what a trace cost.
type runStats struct {
	stops     int64 // ptrace stops handled
	lateTraps int   // traps taken at detach from threads in group-stop
	polled    int64 // stops found by polling after a resume
	blocked   int64 // waits that blocked (no poll, or the poll found nothing)
	pads      int   // sites given an in-process pad
	// padEscapes: async signals that landed in a pad, delivered once its
	// thread stepped out (padsignal.go), in padSteps single-steps.
	padEscapes, padSteps, padRuns int64
	// padFixups: a pad's read of the process's memory that faulted,
	// sent to its fix-up (readFixup).
	padFixups int64
	// padWaits: the times pads found their ring full and waited.
	padWaits uint64
}

var _ probe.Engine = (*Engine)(nil)

// Backend is the ptrace engine for the CLI: available wherever ptrace is.
var Backend = probe.Backend{
	Name:  "ptrace",
	Check: Check,
	New: func(c probe.Config) probe.Engine {
		return &Engine{SlowWakeups: c.SlowWakeups, NoSeccomp: c.NoSeccomp, Info: c.Info, NoPads: c.NoPads, Lossy: c.Lossy, Sync: c.Sync, Verbose: c.Verbose}
	},
}

func (*Engine) Name() string { return "ptrace" }

// Trace implements probe.Engine.
func (e *Engine) Trace(ctx context.Context, t probe.Target, sites []probe.Site, emit func(*probe.Event)) (probe.Result, error) {
	if len(t.Argv) == 0 && len(t.PIDs) == 0 {
		return probe.Result{}, errors.New("ptrace: nothing to trace: no command and no pid")
	}
	type outcome struct {
		res probe.Result
		err error
	}
	defer quietStops()()
	tr := newTracer(t, sites, emit)
	if tr.sys != nil {
		tr.sys.noFilter = e.NoSeccomp
		tr.sys.noGate = t.StackDepth > 0
	}
	d := pads.New(emit, t.Tally)
	// tr.fast is set before the first ring starts the drainer.
	d.SetWaits(pads.Waits{Lossy: e.Lossy, Sync: e.Sync, Woke: func() { tr.fast.stopped() }, CPUs: runtime.NumCPU()})
	d.Lends(t)
	tr.pads = newPadEngine(tr, e.NoPads, e.Verbose, d)
	tr.pads.sync = e.Sync
	tr.signalOwners = []signalOwner{sysPadSignals{tr}, tr.rets, tr.pads, tr.bp, tr.sigs}
	if !e.NoPads {
		if err := padsOK(); err != nil {
			tr.pads.off = true
			if e.Verbose != nil {
				e.Verbose(err.Error())
			}
		}
	}
	if tr.sys != nil {
		// Pads and traps (padsystrap.go) wherever the pads can go; run
		// mode's seccomp filter only where the traps cannot see every
		// call (seccomp.go), attach mode's never (it would outlive the
		// detach).
		tr.sys.trapMode = !tr.sys.noGate && !tr.pads.off
	}
	out := make(chan outcome, 1)
	var copied <-chan struct{} // run mode: the command's output copied
	go func() {
		// Never unlocked: the kernel ties the tracees to this thread, and
		// if the goroutine ends locked, the thread exits, which detaches
		// anything left.
		runtime.LockOSThread()
		rescueOff := rescueOn()
		var err error
		if len(t.Argv) > 0 {
			copied, err = tr.launch()
			if err == nil && pinCPU >= 0 {
				var set unix.CPUSet
				set.Set(pinCPU)
				unix.SchedSetaffinity(0, &set)
				unix.SchedSetaffinity(tr.leader, &set)
			}
		} else {
			err = tr.attachAll()
		}
		if err != nil {
			doom(tr.leader)
			tr.detachAll()
			tr.killLeader()
			rescueOff()
			out <- outcome{err: err}
			return
		}
		stop := tr.watch(ctx)
		if !e.SlowWakeups {
			tr.fast = startWakeups(func() {
				if e.Info != nil {
					e.Info("stops are frequent: idle CPUs asked to poll while they are (--slow-wakeups to leave them halting)")
				}
			})
		}
		tr.resumeAll(tr.list()...)
		tr.loop()
		tr.pads.d.Halt()
		tr.pads.aggSay()
		tr.fast.stop()
		stop()
		if tr.err != nil {
			tr.killLeader()
		}
		if e.stats != nil {
			tr.stats.polled, tr.stats.blocked = tr.poll.hits, tr.poll.blocked
			tr.stats.padWaits = tr.pads.d.Waited()
			*e.stats = tr.stats
		}
		res := probe.Result{ExitCode: tr.exitCode, Lost: tr.pads.d.Lost(), Notices: tr.notices, Tallies: tr.pads.d.Tallies()}
		if tr.pads.d.Lost() > 0 {
			res.Notices = append(res.Notices, lostNotice(e.Lossy))
		}
		if n := tr.pads.d.RetMissed(); n > 0 {
			res.Notices = append(res.Notices, retMissedNotice(n))
		}
		if tr.shepherd {
			res.Notices = append(res.Notices, "the command ran on to its end, traced but not shown: the seccomp filter that selects its "+
				"system calls cannot be removed, and without a tracer those calls would fail (--no-seccomp to detach at once instead)")
		}
		if n := len(tr.overwritten); n > 0 {
			res.Notices = append(res.Notices, fmt.Sprintf("%d breakpoint(s) (at %s) taken out by someone else while tracing, "+
				"e.g. another tracer's uprobe at the same address: calls there were not seen since", n, strings.Join(tr.overwritten[:min(n, 3)], ", ")))
		}
		rescueOff() // a clean end: nothing to undo
		out <- outcome{res: res, err: tr.err}
	}()
	o := <-out
	if copied == nil {
		return o.res, o.err
	}
	select {
	case <-copied:
	case <-time.After(2 * time.Second):
		// A detached descendant still holds the output pipe open.
	}
	return o.res, o.err
}

func (tr *tracer) list() []*process {
	ps := make([]*process, 0, len(tr.procs))
	for _, p := range tr.procs {
		ps = append(ps, p)
	}
	return ps
}

// attachAll seizes every PID, stops all their threads and installs.
func (tr *tracer) attachAll() error {
	for _, pid := range tr.target.PIDs {
		if _, err := tr.attach(pid); err != nil {
			return err
		}
	}
	ps := tr.list()
	tr.quiesce(ps...)
	for _, p := range ps {
		if tr.procs[p.pid] != p {
			continue
		}
		sites := tr.sites
		if tr.target.Resolve != nil {
			var err error
			if sites, err = tr.target.Resolve(p.pid); err != nil {
				return err
			}
		}
		th := tr.injectionThread(p)
		if th == nil {
			continue
		}
		tr.sigs.trapSnapshot(p, th)
		if err := tr.bp.install(p, th, sites); err != nil {
			return err
		}
	}
	return tr.err
}

// watch wakes the loop when ctx is done; the returned func ends watching.
func (tr *tracer) watch(ctx context.Context) (stop func()) {
	done := make(chan struct{})
	go func() {
		select {
		case <-done:
			return
		case <-ctx.Done():
		}
		w := &tr.wake
		for {
			if w.signal() {
				return
			}
			select {
			case <-done:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	return func() {
		close(done)
		tr.wake.mu.Lock()
		tr.wake.done = true
		tr.wake.mu.Unlock()
	}
}

// signal sends the wake-up once; false means try again (the thread it
// chose has exited).
func (w *waker) signal() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return true
	}
	w.cancelled.Store(true)
	target := w.target.Load()
	pid, tid := int(target>>32), int(uint32(target))
	// Recorded before sending: the loop may take the stop before Tgkill
	// returns, and must know it for ours, or it would deliver it and
	// leave the process in a group-stop once detached.
	w.sent.Store(int64(tid))
	if unix.Tgkill(pid, tid, unix.SIGSTOP) != nil {
		w.sent.Store(0)
		return false
	}
	return true
}

// doom sends the command (leader, 0 in attach mode) the SIGKILL
// killLeader waits for, before the detach that would otherwise let it run
// on meanwhile: a trace that fails runs none of the command's code
// untraced.
func doom(leader int) {
	if leader != 0 {
		unix.Kill(leader, unix.SIGKILL)
	}
}

// killLeader ends the command of a run that failed: it must not run on
// untraced as if it had been traced.
func (tr *tracer) killLeader() {
	if tr.leader == 0 {
		return
	}
	if unix.Kill(tr.leader, unix.SIGKILL) == nil {
		proc.Wait(tr.leader, 0)
	}
}

// pinCPU, when not -1, pins the tracer thread and the command to one CPU
// (an experiment of the benchmarks: same-CPU stops cost less here).
var pinCPU = -1
