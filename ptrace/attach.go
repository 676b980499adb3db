//go:build linux && amd64

package ptrace

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/utap/utap/internal/proc"
)

// attach seizes every thread of pid (proc.SeizeThreads).
func (tr *tracer) attach(pid int) (*process, error) {
	if err := proc.CheckLeader(pid); err != nil {
		return nil, err
	}
	p, err := newProcess(pid)
	if err != nil {
		if os.IsPermission(err) {
			return nil, proc.SeizeError(pid, unix.EPERM)
		}
		if errors.Is(err, unix.ESRCH) || os.IsNotExist(err) {
			return nil, fmt.Errorf("pid %d: %w", pid, ErrNoProcess)
		}
		return nil, fmt.Errorf("pid %d: %w", pid, err)
	}
	tr.procs[pid] = p
	err = proc.SeizeThreads(pid, tr.sys.seizeOptions(),
		func(tid int) bool { return tr.threads[tid] != nil },
		func(tid int) { tr.addThread(p, tid) })
	return p, err
}
