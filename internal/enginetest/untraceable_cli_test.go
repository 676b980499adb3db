//go:build linux && amd64

package enginetest

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/utap/utap/internal/proc"
	"github.com/utap/utap/probe"
)

// zombieTracee starts et_work zombie: its child has exited, unreaped. The
// child's pid; the parent ends with the test.
func zombieTracee(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(etWork(t), "zombie")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cmd.Wait() })
	var pid int
	if _, err := fmt.Fscanf(out, "zombie %d\n", &pid); err != nil {
		t.Fatalf("et_work zombie: %v", err)
	}
	return pid
}

// TestCLIAttachUntraceable: utap attach -p refuses a zombie, a kernel
// thread and its own pid with one line saying what it is, on every backend.
func TestCLIAttachUntraceable(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			b.need(t)
			z := fmt.Sprint(zombieTracee(t))
			oneErrorLine(t, utap(t, "attach", "--backend", b.name, "-p", z, "-e", "work"),
				"process "+z+" is a zombie (exited, not yet reaped by its parent): nothing to trace")
			if proc.Comm(2) == "kthreadd" {
				oneErrorLine(t, utap(t, "attach", "--backend", b.name, "-p", "2", "-e", "work"),
					"process 2 is a kernel thread: utap traces user-space programs")
			}
			// $$ is the shell's pid, utap's once the shell execs it.
			if buildErr != nil {
				t.Fatal(buildErr)
			}
			sh := exec.Command("sh", "-c", `exec "$0" attach --backend "$1" -e main -p $$`, utapBin, b.name)
			var stderr bytes.Buffer
			sh.Stderr = &stderr
			err := runWithin(sh, time.Minute)
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("utap attach -p (its own pid): %v, stderr %q", err, stderr.String())
			}
			oneErrorLine(t, cliResult{stderr: stderr.String(), code: exitCode(ee.ProcessState)},
				fmt.Sprintf("process %d is utap itself", sh.Process.Pid))
		})
	}
}

// runWithin runs cmd, killed if it is still running after d.
func runWithin(cmd *exec.Cmd, d time.Duration) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	timer := time.AfterFunc(d, func() { cmd.Process.Kill() })
	defer timer.Stop()
	return cmd.Wait()
}

// TestAttachUntraceable: each engine refuses a zombie with
// proc.ErrUntraceable.
func TestAttachUntraceable(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.Name(), func(t *testing.T) {
			needEngine(t, eng)
			z := zombieTracee(t)
			_, sites := resolvePID(t, zombieParent(t, z), "work")
			_, err := eng.Trace(t.Context(), probe.Target{PIDs: []int{z}}, sites, func(*probe.Event) {})
			if !errors.Is(err, proc.ErrUntraceable) || !strings.Contains(err.Error(), "is a zombie") {
				t.Errorf("err = %v, want a zombie's refusal (%v)", err, proc.ErrUntraceable)
			}
		})
	}
}

// zombieParent is the parent of pid, whose image the probes resolve in.
func zombieParent(t *testing.T, pid int) int {
	t.Helper()
	v, err := proc.StatusField(pid, "PPid")
	if err != nil {
		t.Fatal(err)
	}
	var ppid int
	fmt.Sscan(v, &ppid)
	return ppid
}
