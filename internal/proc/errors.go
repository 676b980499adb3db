//go:build linux && amd64

package proc

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Sentinel errors, wrapped with the process concerned and what to do.
var (
	ErrNoProcess  = errors.New("no such process")
	ErrPermission = errors.New("not permitted to trace")
)

// msgError is an error whose text is written for the user in full, while
// errors.Is still finds the sentinel it stands for.
type msgError struct {
	msg string
	err error
}

func (e *msgError) Error() string { return e.msg }
func (e *msgError) Unwrap() error { return e.err }

// Error turns a failure to read what of /proc/PID into an error that says
// what to do about it.
func Error(pid int, what string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &msgError{fmt.Sprintf("process %d does not exist", pid), ErrNoProcess}
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		return fmt.Errorf("reading %s of process %d: %w (run as root or grant CAP_SYS_PTRACE)", what, pid, err)
	}
	return fmt.Errorf("reading %s of process %d: %w", what, pid, err)
}

// StatusField returns one field of /proc/TID/status.
func StatusField(tid int, name string) (string, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", tid))
	if err != nil {
		return "", err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if k, v, ok := strings.Cut(s.Text(), ":"); ok && k == name {
			return strings.TrimSpace(v), nil
		}
	}
	return "", fmt.Errorf("/proc/%d/status: no %s", tid, name)
}

// StatusMask returns a signal mask field of /proc/TID/status (SigPnd,
// SigBlk, SigIgn, SigCgt...): bit n-1 is signal n.
func StatusMask(tid int, name string) (uint64, error) {
	v, err := StatusField(tid, name)
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(v, 16, 64)
}

// Comm is the command name of pid, "" if unknown.
func Comm(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	return strings.TrimSpace(string(b))
}

// SeizeError turns a failed PTRACE_SEIZE into an error saying what blocks it.
func SeizeError(pid int, err error) error {
	switch err {
	case unix.ESRCH:
		return fmt.Errorf("pid %d: %w", pid, ErrNoProcess)
	case unix.EPERM:
		if tracer := tracerPID(pid); tracer > 0 {
			return fmt.Errorf("pid %d: %w: already traced by pid %d (%s)", pid, ErrPermission, tracer, Comm(tracer))
		}
		hint := "run as root or grant CAP_SYS_PTRACE"
		if b, e := os.ReadFile("/proc/sys/kernel/yama/ptrace_scope"); e == nil && strings.TrimSpace(string(b)) != "0" {
			hint += "; kernel.yama.ptrace_scope=" + strings.TrimSpace(string(b)) + " restricts attaching"
		}
		return fmt.Errorf("pid %d: %w (%s)", pid, ErrPermission, hint)
	}
	return fmt.Errorf("pid %d: seize: %w", pid, err)
}

// tracerPID reads TracerPid from /proc/PID/status (0: none or unknown).
func tracerPID(pid int) int {
	v, _ := StatusField(pid, "TracerPid")
	var n int
	fmt.Sscan(v, &n)
	return n
}
