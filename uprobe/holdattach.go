//go:build linux && amd64

package uprobe

import (
	"runtime"

	"github.com/utap/utap/internal/proc"
)

// holdAttached holds the execs of attached processes as a launched
// command's are held (hold.go): every thread is seized (PTRACE_SEIZE, which
// stops nothing) for its exec and clone events, with follow its forks',
// and the hold's loop runs on a thread of its own, which ptrace answers.
// Their parents then see no stop, where the tracker's SIGSTOP shows as
// CLD_STOPPED and a job-control shell says the job stopped. On an error
// (a process traced already, ptrace refused) nothing stays seized: the
// thread exits, and the kernel lets go of what it had seized.
func holdAttached(pids []int, follow bool, onExec func(pid int)) (*execHold, error) {
	h := newExecHold(follow, onExec)
	ready := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: its end detaches its tracees
		for _, pid := range pids {
			err := proc.SeizeThreads(pid, h.options(), func(tid int) bool { return h.tids[tid] }, func(tid int) { h.tids[tid] = true })
			if err != nil {
				ready <- err
				return
			}
		}
		ready <- nil
		h.loop()
	}()
	if err := <-ready; err != nil {
		return nil, err
	}
	return h, nil
}

// holdExecs holds the execs of the attached pids once their first probes
// are in: by ptrace where it can (holdAttached), else by the tracker's
// SIGSTOP, which is said.
func (s *session) holdExecs(pids []int) error {
	ex := s.ex
	if ex == nil || !ex.attached {
		return nil
	}
	h, err := holdAttached(pids, ex.follow, ex.held)
	if err == nil {
		ex.hold = h
		return nil
	}
	ex.note("execs are held by a SIGSTOP its parent may see (a job-control shell says the job stopped): " +
		"ptrace could not seize it (" + err.Error() + ")")
	if err := followExecs(s.objs, s.sites.sites, ex, true); err != nil {
		if ex.follow {
			return err
		}
		// What worked before exec following still does: said, not fatal.
		ex.note("execs of the traced process are not followed (" + err.Error() + "): if it execs, its new image's calls are not seen; --backend ptrace sees them")
	}
	return nil
}
