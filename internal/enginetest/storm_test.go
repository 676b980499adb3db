//go:build linux && amd64

package enginetest

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCLITermInSignalStorm: SIGTERM ends an attached trace while another
// process floods the tracee with signals; the tracee is left running, not
// stopped (the ptrace engine's own SIGSTOP once reached it) nor traced.
func TestCLITermInSignalStorm(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			b.need(t)
			if buildErr != nil {
				t.Fatal(buildErr)
			}
			for round := 0; round < 3; round++ {
				stormThenTerm(t, b.name)
			}
		})
	}
}

func stormThenTerm(t *testing.T, backend string) {
	t.Helper()
	// A flood longer than the test: its child signals until killed.
	tracee := exec.Command(etWork(t), "flood", "1000000000", "usr1")
	tracee.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := tracee.Start(); err != nil {
		t.Fatal(err)
	}
	pid := tracee.Process.Pid
	defer func() { syscall.Kill(-pid, syscall.SIGKILL); tracee.Wait() }()
	time.Sleep(100 * time.Millisecond)

	out := filepath.Join(t.TempDir(), "events")
	cmd, stderr := attachWaiting(t, out, "-q", "--backend", backend, "-p", fmt.Sprint(pid), "-o", out, "-e", "work(arg1)")
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("utap after SIGTERM: %v; stderr %q", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("utap still running 10s after SIGTERM; stderr %q", stderr.String())
	}
	if n := statusField(t, pid, "TracerPid"); n != "0" {
		t.Errorf("still traced by %s", n)
	}
	// Sampled for a while: a SIGSTOP left pending would show soon.
	for i := 0; i < 20; i++ {
		if st := statusField(t, pid, "State"); strings.HasPrefix(st, "T") || strings.HasPrefix(st, "t") {
			t.Fatalf("the process was left stopped (%s)", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
