//go:build linux && amd64

package rescue

import (
	"errors"
	"fmt"
	"runtime"
	"time"

	"golang.org/x/sys/unix"

	"github.com/utap/utap/internal/proc"
)

// seizeFor bounds the wait for the dying tracer to let a process go.
const seizeFor = 2 * time.Second

// Tend is the tracer of processes that run utap's seccomp filter once
// their tracer is dead: the filter stops each probed call for a tracer
// (SECCOMP_RET_TRACE), and with none the kernel fails the call with
// ENOSYS (the program dies at its next exit_group). A filter cannot be
// taken out, so Tend seizes every thread of pids and lets each stopped
// call run, passes signals on, keeps group-stops (PTRACE_LISTEN) and
// follows the clones and forks (which inherit the filter), until all have
// exited. A thread that stops at an int3 Undo took out goes back to its
// instruction, the signal dropped. It returns once the processes are
// gone; the caller's goroutine stays on its OS thread (ptrace's rule).
func Tend(pids []int) error {
	runtime.LockOSThread()
	return seize(pids).run()
}

// tending is the tasks Tend traces.
type tending struct {
	live map[int]bool
	errs []error
}

// seize seizes every thread of pids, waiting for a dying tracer to let
// them go (Rescue runs as it starts to exit).
func seize(pids []int) *tending {
	const opts = unix.PTRACE_O_TRACESYSGOOD | unix.PTRACE_O_TRACESECCOMP | unix.PTRACE_O_TRACECLONE |
		unix.PTRACE_O_TRACEFORK | unix.PTRACE_O_TRACEVFORK | unix.PTRACE_O_TRACEEXEC
	tg := &tending{live: map[int]bool{}}
	for _, pid := range pids {
		var err error
		for start := time.Now(); time.Since(start) < seizeFor; time.Sleep(20 * time.Microsecond) {
			err = proc.SeizeThreads(pid, opts, func(tid int) bool { return tg.live[tid] }, func(tid int) { tg.live[tid] = true })
			if err == nil || !errors.Is(err, proc.ErrPermission) {
				break
			}
		}
		if err != nil {
			tg.errs = append(tg.errs, fmt.Errorf("pid %d: %w", pid, err))
		}
	}
	return tg
}

// run lets the tasks go on as untraced until all have exited.
func (tg *tending) run() error {
	for len(tg.live) > 0 {
		tid, ws, err := proc.Wait(-1, 0)
		if err != nil {
			if errors.Is(err, unix.ECHILD) {
				break
			}
			return errors.Join(append(tg.errs, err)...)
		}
		if ws.Exited() || ws.Signaled() {
			delete(tg.live, tid)
			continue
		}
		if !ws.Stopped() {
			continue
		}
		tg.live[tid] = true // a new task's first stop
		resume(tid, ws)
	}
	return errors.Join(tg.errs...)
}

// resume lets stopped tid go on as it would untraced.
func resume(tid int, ws unix.WaitStatus) {
	sig := ws.StopSignal()
	switch ev := proc.Event(ws); {
	case ev == unix.PTRACE_EVENT_STOP && groupStop(tid):
		proc.Listen(tid) // a group-stop stays one
	case ev != 0:
		proc.Cont(tid, 0) // the filter's stop (the call runs), a clone, fork, exec, a new task's first stop
	case sig == unix.SIGTRAP && staleInt3(tid):
		proc.Cont(tid, 0)
	default:
		proc.Cont(tid, int(sig))
	}
}

// groupStop says whether tid's PTRACE_EVENT_STOP is a group-stop: one
// without siginfo (a new task's first stop has one).
func groupStop(tid int) bool {
	var si proc.Siginfo
	return errors.Is(proc.GetSiginfo(tid, &si), unix.EINVAL)
}

// staleInt3 says whether tid stopped at an int3 of the dead tracer's
// that Undo has taken out since (the byte before rip is no int3 now),
// and if so moves it back to the instruction.
func staleInt3(tid int) bool {
	var si proc.Siginfo
	var regs unix.PtraceRegs
	if proc.GetSiginfo(tid, &si) != nil || si.Code != proc.SIKernel || proc.GetRegs(tid, &regs) != nil {
		return false
	}
	var b [1]byte
	if n, err := unix.PtracePeekText(tid, uintptr(regs.Rip-1), b[:]); err != nil || n != 1 || b[0] == 0xcc {
		return false
	}
	regs.Rip--
	return proc.SetRegs(tid, &regs) == nil
}
