package ptrace

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// attach seizes every thread of pid, rescanning /proc/PID/task until a
// pass finds no new thread (threads created by a seized thread are
// attached by the kernel: TRACECLONE).
func (tr *tracer) attach(pid int) (*process, error) {
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
		return nil, fmt.Errorf("pid %d: %w", pid, ErrNoProcess)
	}
	if tgid, err := statusField(pid, "Tgid"); err == nil && tgid != strconv.Itoa(pid) {
		return nil, fmt.Errorf("pid %d is a thread of process %s: give the process id", pid, tgid)
	}
	p, err := newProcess(pid)
	if err != nil {
		if os.IsPermission(err) {
			return nil, seizeError(pid, errPerm)
		}
		if errors.Is(err, unix.ESRCH) || os.IsNotExist(err) {
			return nil, fmt.Errorf("pid %d: %w", pid, ErrNoProcess)
		}
		return nil, fmt.Errorf("pid %d: %w", pid, err)
	}
	tr.procs[pid] = p
	for {
		added := 0
		ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		if err != nil {
			return p, fmt.Errorf("pid %d: %w", pid, ErrNoProcess)
		}
		for _, e := range ents {
			tid, err := strconv.Atoi(e.Name())
			if err != nil || tr.threads[tid] != nil {
				continue
			}
			if err := seize(tid, seizeOptions); err != nil {
				if tid != pid && errors.Is(err, unix.EPERM) && tracedByUs(tid) {
					// Created by a thread seized already: attached by the
					// kernel, adopted at its parent's clone event.
					continue
				}
				if tid == pid || !isESRCH(err) {
					return p, seizeError(tid, err)
				}
				continue // exited meanwhile
			}
			tr.addThread(p, tid)
			added++
		}
		if added == 0 {
			return p, nil
		}
	}
}

// tracedByUs tells whether tid's tracer is this process.
func tracedByUs(tid int) bool {
	v, err := statusField(tid, "TracerPid")
	return err == nil && v == strconv.Itoa(os.Getpid())
}
