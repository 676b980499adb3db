//go:build linux && amd64

package proc

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// CheckLeader says whether pid is a traceable process (CheckTraceable)
// given by its process id (not one of its threads' ids).
func CheckLeader(pid int) error {
	if err := CheckTraceable(pid); err != nil {
		return err
	}
	if tgid, err := StatusField(pid, "Tgid"); err == nil && tgid != strconv.Itoa(pid) {
		return fmt.Errorf("pid %d is a thread of process %s: give the process id", pid, tgid)
	}
	return nil
}

// SeizeThreads seizes every thread of process pid with opts, rescanning
// /proc/PID/task until a pass finds no new thread (threads created by a
// seized thread are attached by the kernel: TRACECLONE). known says which
// threads are traced already; add records each one seized.
func SeizeThreads(pid, opts int, known func(tid int) bool, add func(tid int)) error {
	for {
		added := 0
		ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		if err != nil {
			return fmt.Errorf("pid %d: %w", pid, ErrNoProcess)
		}
		for _, e := range ents {
			tid, err := strconv.Atoi(e.Name())
			if err != nil || known(tid) {
				continue
			}
			if err := Seize(tid, opts); err != nil {
				if tid != pid && errors.Is(err, unix.EPERM) && (tracedByUs(tid) || untraced(tid)) {
					// Created by a thread seized already: attached by the
					// kernel, adopted at its parent's clone event. Or, with
					// no tracer, exiting: the kernel refuses to attach to an
					// exiting task (the leader, seized, has the same rights).
					continue
				}
				if tid == pid || err != unix.ESRCH {
					return SeizeError(tid, err)
				}
				continue // exited meanwhile
			}
			add(tid)
			added++
		}
		if added == 0 {
			return nil
		}
	}
}

// untraced tells whether tid has no tracer (or is gone).
func untraced(tid int) bool {
	v, err := StatusField(tid, "TracerPid")
	return err != nil || v == "0"
}

// tracedByUs tells whether tid's tracer is this process. TracerPid names
// the tracer's thread, which is one of ours, seldom the main one.
func tracedByUs(tid int) bool {
	v, err := StatusField(tid, "TracerPid")
	if err != nil || v == "0" {
		return false
	}
	_, err = os.Stat(fmt.Sprintf("/proc/%d/task/%s", os.Getpid(), v))
	return err == nil
}
