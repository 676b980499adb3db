//go:build linux && amd64

package proc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ErrUntraceable is a process that exists but that no tracer can trace:
// a zombie, a kernel thread, utap itself.
var ErrUntraceable = errors.New("process cannot be traced")

// pfKthread is PF_KTHREAD in the flags of /proc/PID/stat.
const pfKthread = 0x00200000

// CheckTraceable says why process pid cannot be traced, in the user's
// words: it does not exist, is a zombie, is a kernel thread, or is this
// very process (which would trace itself: ptrace refuses, and probes on
// the tracer's own code would report its own reporting).
func CheckTraceable(pid int) error {
	state, flags, err := stat(pid)
	if err != nil {
		return Error(pid, "stat", err)
	}
	switch {
	case flags&pfKthread != 0:
		return &msgError{fmt.Sprintf("process %d is a kernel thread: utap traces user-space programs", pid), ErrUntraceable}
	case (state == 'Z' || state == 'X') && !anyThreadLive(pid):
		return &msgError{fmt.Sprintf("process %d is a zombie (exited, not yet reaped by its parent): nothing to trace", pid), ErrUntraceable}
	}
	if tgid, err := StatusField(pid, "Tgid"); err == nil && tgid == strconv.Itoa(os.Getpid()) {
		return ItselfError(pid)
	}
	return nil
}

// ItselfError is the error of a pid that is utap's own (this process, or
// the CLI's supervisor of it).
func ItselfError(pid int) error {
	return &msgError{fmt.Sprintf("process %d is utap itself: it cannot trace itself; give the pid of another process", pid), ErrUntraceable}
}

// stat reads the state and flags of /proc/PID/stat.
func stat(pid int) (state byte, flags uint64, err error) {
	f, err := StatFields(pid, 7)
	if err != nil {
		return 0, 0, err
	}
	// Fields after the name: state ppid pgrp session tty_nr tpgid flags.
	flags, err = strconv.ParseUint(f[6], 10, 64)
	return f[0][0], flags, err
}

// StatFields is /proc/PID/stat's fields after the command's name (which
// may hold spaces and parentheses): field 3, the state, first; at least
// n of them.
func StatFields(pid, n int) ([]string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	i := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[i+1:]))
	if i < 0 || len(f) < n {
		return nil, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	return f, nil
}

// anyThreadLive says whether a thread of pid is not a zombie: a leader
// that ended with pthread_exit is one while the others run on.
func anyThreadLive(pid int) bool {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return false
	}
	for _, e := range ents {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, _, err := stat(tid); err == nil && st != 'Z' && st != 'X' {
			return true
		}
	}
	return false
}
