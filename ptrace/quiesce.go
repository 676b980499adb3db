//go:build linux && amd64

package ptrace

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/utap/utap/internal/proc"
)

// reinterruptAfter is how long quiesce waits for an interrupted thread's
// stop before interrupting it again.
const reinterruptAfter = 100 * time.Millisecond

// quiesce stops every thread of ps, handling (and holding) whatever stops
// come first: a thread that hits a breakpoint meanwhile has its hit
// reported and is held with its registers set to run on.
//
// It polls rather than block in wait4: an interrupt can be lost (seen on
// 6.18 with threads starting and ending while attaching: a thread left
// asleep in futex, traced and never reporting the stop), and a thread
// still running reinterruptAfter after its interrupt is interrupted
// again. A second interrupt's extra EVENT_STOP is absorbed like any stray
// one (eventStop).
func (tr *tracer) quiesce(ps ...*process) {
	for _, p := range ps {
		p.holding = true
	}
	interruptRunning(ps)
	last := time.Now()
	for backoff := time.Duration(0); tr.running(ps); {
		tid, ws, err := proc.WaitNoHang()
		if err != nil {
			if err != unix.ECHILD {
				tr.fail(err)
			}
			return
		}
		if tid != 0 {
			tr.handle(tid, ws)
			backoff, last = 0, time.Now()
			continue
		}
		if time.Since(last) > reinterruptAfter {
			reinterrupt(ps)
			last = time.Now()
		}
		backoff = min(max(2*backoff, 20*time.Microsecond), time.Millisecond)
		time.Sleep(backoff)
	}
}

// interruptRunning sends PTRACE_INTERRUPT to every thread of ps that may
// run and has none pending.
func interruptRunning(ps []*process) {
	for _, p := range ps {
		for _, th := range p.threads {
			if !th.stopped && !th.vfork && !th.interrupted {
				if err := proc.Interrupt(th.tid); err == nil {
					th.interrupted = true
				} else {
					// Exiting, or a zombie leader whose threads live on:
					// it never stops again.
					th.dead = true
				}
			}
		}
	}
}

// reinterrupt interrupts again the threads of ps whose interrupt has not
// stopped them.
func reinterrupt(ps []*process) {
	for _, p := range ps {
		for _, th := range p.threads {
			if !th.stopped && !th.vfork && !th.dead && th.interrupted {
				th.interrupted = false
			}
		}
	}
	interruptRunning(ps)
}

// running reports whether a thread of ps can still run. A vfork parent
// cannot stop until the child execs or exits; it counts as stopped. A
// thread we could not interrupt (exiting) will report its exit.
func (tr *tracer) running(ps []*process) bool {
	for _, p := range ps {
		if tr.procs[p.pid] != p {
			continue
		}
		for _, th := range p.threads {
			if !th.stopped && !th.vfork && !th.dead {
				return true
			}
		}
	}
	return false
}

// resumeOthers ends p's quiescing from th's stop: every thread but th
// (the caller's, which goes on with its own stop) resumes.
func (tr *tracer) resumeOthers(p *process, th *thread) {
	p.holding = false
	for _, t := range p.threads {
		if t != th {
			tr.resume(t)
		}
	}
}

// resumeAll lets the threads of ps run again.
func (tr *tracer) resumeAll(ps ...*process) {
	for _, p := range ps {
		p.holding = false
		for _, th := range p.threads {
			tr.resume(th)
		}
	}
}
