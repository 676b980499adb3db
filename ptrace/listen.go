//go:build linux && amd64

package ptrace

import (
	"time"

	"github.com/utap/utap/internal/proc"
	"golang.org/x/sys/unix"
)

// A thread resumed with PTRACE_LISTEN sits in its group-stop and reports
// nothing until the stop ends (SIGCONT), it dies, or we interrupt it;
// signals sent to it meanwhile, the watcher's wake-up SIGSTOP included,
// stay queued. When every traced thread is listening, a blocking wait4
// could therefore sleep through a cancellation for as long as the
// process stays stopped: the loop polls instead.

// listenPoll is how long the loop sleeps between polls while every
// thread is in a group-stop (a job-control stop: latency hardly matters).
const listenPoll = 2 * time.Millisecond

// allListening reports whether no traced thread can report a stop of its
// own accord before its group-stop ends.
func (tr *tracer) allListening() bool {
	if len(tr.early) > 0 {
		return false
	}
	for _, th := range tr.threads {
		if !th.listening && !th.dead {
			return false
		}
	}
	return true
}

// nextListening waits for a stop while every thread is listening: it
// returns tid 0 once the trace is cancelled.
func (tr *tracer) nextListening() (int, unix.WaitStatus, error) {
	for {
		tid, ws, err := proc.WaitNoHang()
		if tid != 0 || err != nil {
			return tid, ws, err
		}
		if tr.wake.cancelled.Load() && !tr.shepherd {
			return 0, 0, nil // the loop detaches; a shepherd waits on
		}
		time.Sleep(listenPoll)
	}
}
