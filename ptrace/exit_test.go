//go:build linux && amd64

package ptrace

import (
	"context"
	"errors"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/probe"
)

// TestExitWhileAttaching attaches to short-lived processes at various
// moments of their life: attaching must end cleanly whenever they exit
// (during seize, quiesce, injection or install), never hang.
func TestExitWhileAttaching(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "pt_count.c")
	sites := []probe.Site{siteAt(t, bin, "work", 0)}
	for i := range 20 {
		cmd := exec.Command(bin, "4", "20000")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(i%5) * 200 * time.Microsecond)
		done := make(chan error, 1)
		go func() {
			_, err := (&Engine{}).Trace(context.Background(), probe.Target{PIDs: []int{cmd.Process.Pid}}, sites, func(*probe.Event) {})
			done <- err
		}()
		select {
		case err := <-done:
			if err != nil && !errors.Is(err, ErrNoProcess) {
				t.Logf("attempt %d: %v", i, err)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("attempt %d: trace did not end", i)
		}
		// The tracer thread is in the parent's thread group, so the exit
		// it reaps is gone for cmd.Wait (ECHILD): not so for other tracees.
		if err := cmd.Wait(); err != nil && !errors.Is(err, syscall.ECHILD) {
			t.Fatalf("attempt %d: the process failed: %v", i, err)
		}
	}
}
