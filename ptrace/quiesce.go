//go:build linux && amd64

package ptrace

import (
	"github.com/utap/utap/internal/proc"
	"golang.org/x/sys/unix"
)

// quiesce stops every thread of ps, handling (and holding) whatever stops
// come first: a thread that hits a breakpoint meanwhile has its hit
// reported and is held with its registers set to run on.
func (tr *tracer) quiesce(ps ...*process) {
	for _, p := range ps {
		p.holding = true
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
	for tr.running(ps) {
		tid, ws, err := proc.Wait(-1, 0)
		if err != nil {
			if err != unix.ECHILD {
				tr.fail(err)
			}
			return
		}
		tr.handle(tid, ws)
	}
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

// resumeAll lets the threads of ps run again.
func (tr *tracer) resumeAll(ps ...*process) {
	for _, p := range ps {
		p.holding = false
		for _, th := range p.threads {
			tr.resume(th)
		}
	}
}
