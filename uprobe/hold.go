//go:build linux && amd64

package uprobe

import (
	"errors"
	"os"
	"os/signal"
	"time"

	"github.com/utap/utap/internal/proc"
	"golang.org/x/sys/unix"
)

// The hold of a launched command's execs: its processes are seized
// (PTRACE_SEIZE) for their exec events, and with -f their fork, vfork and
// clone events, which seize the children too; never PTRACE_SYSCALL. A
// seized process stops at those events and at its signals' deliveries,
// each resumed at once with the signal as it came: ptrace stops are not
// job-control stops, so its parent sees no SIGCHLD and no WUNTRACED
// status for them, where a SIGSTOP (the BPF hold of an attached process,
// exec.go) would show as CLD_STOPPED then CLD_CONTINUED. A real group-stop
// stays one (PTRACE_LISTEN). At an exec event the new image's probes go in
// (execFollower.traceImage), then the process runs on.
//
// ptrace answers only the thread that seized, so everything runs on the
// goroutine that started the command, locked to its thread (launch.go).
// The loop waits with WNOHANG and sleeps on SIGCHLD, which the kernel
// sends the tracer at every stop and exit of a tracee, so that stop can
// interrupt it.

// execHold is the seized processes of one command and the loop that
// resumes them.
type execHold struct {
	follow  bool          // Target.Follow: children are seized too
	onExec  func(pid int) // places the new image's probes; pid is held
	pid     int           // the command, whose exit status is ours to reap
	exit    chan unix.WaitStatus
	stopReq chan struct{}
	done    chan struct{}
	tids    map[int]bool // seized threads
	ourCont bool         // the SIGCONT that ended the seize's stop is not delivered
	closing bool
}

func newExecHold(follow bool, onExec func(pid int)) *execHold {
	return &execHold{follow: follow, onExec: onExec, exit: make(chan unix.WaitStatus, 1),
		stopReq: make(chan struct{}), done: make(chan struct{}), tids: map[int]bool{}}
}

// options: exec events, and clone's, since an exec from any thread must
// be seen (a thread not seized execs unseen); with -f fork's and vfork's.
func (h *execHold) options() int {
	opts := unix.PTRACE_O_TRACEEXEC | unix.PTRACE_O_TRACECLONE
	if h.follow {
		opts |= unix.PTRACE_O_TRACEFORK | unix.PTRACE_O_TRACEVFORK
	}
	return opts
}

// start turns c's hold at its exec into a seize and lets it run. On an
// error it runs on untraced.
func (h *execHold) start(c *proc.Child) error {
	h.pid = c.Pid
	if err := c.Seize(h.options()); err != nil {
		unix.Kill(c.Pid, unix.SIGCONT)
		return err
	}
	h.tids[c.Pid] = true
	// Seize leaves it in a group-stop that only SIGCONT ends; that signal
	// is ours, not delivered (ourCont). Its CLD_CONTINUED goes to utap.
	unix.Kill(c.Pid, unix.SIGCONT)
	h.ourCont = true
	return proc.Cont(c.Pid, 0)
}

// loop resumes every stop until no seized thread is left, or, once stop
// asks, detaches them all.
func (h *execHold) loop() {
	defer close(h.done)
	defer close(h.exit)
	chld := make(chan os.Signal, 1)
	signal.Notify(chld, unix.SIGCHLD)
	defer signal.Stop(chld)
	// SIGCHLDs merge, and every wake drains all that waits: the tick
	// only covers one the runtime could not queue.
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	stopReq := h.stopReq
	for len(h.tids) > 0 {
		tid, ws, err := proc.WaitNoHang()
		if errors.Is(err, unix.ECHILD) {
			return
		}
		if tid > 0 {
			h.handle(tid, ws)
		}
		select {
		case <-stopReq:
			stopReq = nil
			h.detachAll()
			continue
		default:
		}
		if tid > 0 || err != nil {
			continue
		}
		select {
		case <-stopReq:
			stopReq = nil
			h.detachAll()
		case <-chld:
		case <-tick.C:
		}
	}
}

// detachAll stops every seized thread (PTRACE_INTERRUPT); each is let go
// at its next stop (handle).
func (h *execHold) detachAll() {
	h.closing = true
	for tid := range h.tids {
		if proc.Interrupt(tid) != nil {
			delete(h.tids, tid) // gone
		}
	}
}

// handle resumes one stop, or records an exit.
func (h *execHold) handle(tid int, ws unix.WaitStatus) {
	if ws.Exited() || ws.Signaled() {
		delete(h.tids, tid)
		if tid == h.pid {
			h.exit <- ws
		}
		return
	}
	if !ws.Stopped() {
		return
	}
	h.tids[tid] = true // a new child's first stop can come before its parent's event
	sig := int(ws.StopSignal())
	ev := proc.Event(ws)
	switch ev {
	case 0: // signal-delivery-stop: delivered as it came
		if sig == int(unix.SIGCONT) && h.ourCont && tid == h.pid {
			h.ourCont, sig = false, 0
		}
	case unix.PTRACE_EVENT_STOP:
		switch unix.Signal(sig) {
		case unix.SIGSTOP, unix.SIGTSTP, unix.SIGTTIN, unix.SIGTTOU:
			if h.closing {
				// Detached in its group-stop, it stays stopped.
				h.let(tid, 0)
				return
			}
			proc.Listen(tid) // a real group-stop: it stays one
			return
		}
		sig = 0 // our interrupt, or a new tracee's first stop
	case unix.PTRACE_EVENT_EXEC:
		if old, err := proc.EventMsg(tid); err == nil && int(old) != tid {
			delete(h.tids, int(old)) // the thread that exec'd now has the pid
		}
		if !h.closing {
			h.onExec(tid)
		}
		sig = 0
	case unix.PTRACE_EVENT_FORK, unix.PTRACE_EVENT_VFORK, unix.PTRACE_EVENT_CLONE:
		if msg, err := proc.EventMsg(tid); err == nil {
			h.tids[int(msg)] = true
			if h.closing {
				proc.Interrupt(int(msg)) // let go at its first stop
			}
		}
		sig = 0
	default:
		sig = 0
	}
	if h.closing {
		h.let(tid, sig)
		return
	}
	proc.Cont(tid, sig)
}

// let detaches tid, delivering sig.
func (h *execHold) let(tid, sig int) {
	proc.Detach(tid, sig)
	delete(h.tids, tid)
}

// stop detaches whatever is still seized and waits for the loop's end.
func (h *execHold) stop() {
	if h == nil {
		return
	}
	select {
	case h.stopReq <- struct{}{}:
	case <-h.done:
	}
	<-h.done
}
