//go:build linux && amd64

package proc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestCheckTraceable: a zombie, a kernel thread and this very process are
// each refused with what they are; a live process passes.
func TestCheckTraceable(t *testing.T) {
	live := exec.Command("sleep", "60")
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { live.Process.Kill(); live.Wait() }()
	if err := CheckTraceable(live.Process.Pid); err != nil {
		t.Errorf("a live process: %v", err)
	}

	// A child that has exited and that this test does not reap (WNOWAIT).
	dead := exec.Command("true")
	if err := dead.Start(); err != nil {
		t.Fatal(err)
	}
	defer dead.Wait()
	var si unix.Siginfo
	if err := unix.Waitid(unix.P_PID, dead.Process.Pid, &si, unix.WEXITED|unix.WNOWAIT, nil); err != nil {
		t.Fatal(err)
	}
	want(t, CheckTraceable(dead.Process.Pid), ErrUntraceable, fmt.Sprintf("process %d is a zombie (exited, not yet reaped by its parent): nothing to trace", dead.Process.Pid))

	// kthreadd is pid 2 wherever the kernel's threads are visible.
	if Comm(2) == "kthreadd" {
		want(t, CheckTraceable(2), ErrUntraceable, "process 2 is a kernel thread: utap traces user-space programs")
	} else {
		t.Log("pid 2 is not kthreadd here (a pid namespace): no kernel thread to check")
	}

	self := os.Getpid()
	want(t, CheckTraceable(self), ErrUntraceable, fmt.Sprintf("process %d is utap itself", self))
	// The same refusal through CheckLeader, which the engines call.
	want(t, CheckLeader(self), ErrUntraceable, "utap itself")

	// Gone: reaped.
	dead.Wait()
	want(t, CheckTraceable(dead.Process.Pid), ErrNoProcess, fmt.Sprintf("process %d does not exist", dead.Process.Pid))
}

func want(t *testing.T, err, sentinel error, text string) {
	t.Helper()
	if !errors.Is(err, sentinel) || !strings.Contains(err.Error(), text) || strings.Contains(err.Error(), "\n") {
		t.Errorf("error %v; want one line with %q (%v)", err, text, sentinel)
	}
}
