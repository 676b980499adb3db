package ptrace

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// Sentinel errors, wrapped with the PID, site or instruction concerned.
var (
	ErrNoProcess  = errors.New("no such process")
	ErrPermission = errors.New("not permitted to trace")
	ErrRefused    = errors.New("cannot probe this instruction")
)

// seizeError turns a failed PTRACE_SEIZE into an error saying what blocks it.
func seizeError(pid int, err error) error {
	switch err {
	case unix.ESRCH:
		return fmt.Errorf("pid %d: %w", pid, ErrNoProcess)
	case unix.EPERM:
		if tracer := tracerPID(pid); tracer > 0 {
			return fmt.Errorf("pid %d: %w: already traced by pid %d (%s)", pid, ErrPermission, tracer, comm(tracer))
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
	v, _ := statusField(pid, "TracerPid")
	var n int
	fmt.Sscan(v, &n)
	return n
}

func comm(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	return strings.TrimSpace(string(b))
}

// statusField returns one field of /proc/TID/status.
func statusField(tid int, name string) (string, error) {
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

var errPerm = unix.EPERM

func isESRCH(err error) bool { return err == unix.ESRCH }
