//go:build linux && amd64

package enginetest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
)

// TestCLIPadsTracerKilled: the tracer itself is killed by SIGKILL (pkill -9
// utap) while the command calls a function probed by an in-process pad as
// fast as it can. Nothing is taken out, yet the command lives: its pad
// runs on without a tracer, the ring fills, the pads wait for room until
// they find the tracer's heartbeat still (about a second), then drop, and
// nothing traps, not even its calls of sigprocmask, pthread_sigmask and
// sigaction, which utap hooks only in a process that has breakpoints of
// its own. "signal calls" fills the ring after the kill for certain, under
// a 100 µs SIGALRM (waits interrupted), and the command ends.
func TestCLIPadsTracerKilled(t *testing.T) {
	need.Root(t)
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	t.Run("spin", func(t *testing.T) {
		child, _ := padsTracerKilled(t, "spin")
		// The ring fills within milliseconds at this rate; the pads wait,
		// give the tracer up, and the command runs on.
		runs := false
		for range 40 {
			if st := statusField(t, child, "State"); !strings.HasPrefix(st, "R") && !strings.HasPrefix(st, "S") {
				t.Fatalf("the command's state once the tracer is gone: %q", st)
			}
			t0 := cpuTicks(t, child)
			time.Sleep(300 * time.Millisecond)
			if cpuTicks(t, child) > t0 {
				runs = true
				break
			}
		}
		if !runs {
			t.Fatalf("the command no longer runs (12 s without CPU time)")
		}
		if n := statusField(t, child, "TracerPid"); n != "0" {
			t.Errorf("the command is still traced by %s", n)
		}
	})
	// Returns in pads: frames in flight when the tracer dies return
	// through their return pads, which need nothing from it.
	t.Run("returns", func(t *testing.T) {
		goOn := filepath.Join(t.TempDir(), "go")
		child, lines := padsKilledWith(t, etWork(t), "--format=text", "work(arg1)", "work has no pad", "afterkill", goOn)
		goOnLast(t, goOn, lines, child, "afterkill 1")
	})
	// C++ exceptions through frames whose returns are pads': the
	// unwinders' entries are restore pads, not breakpoints, so neither
	// they nor libc's signal calls trap once the tracer is gone.
	t.Run("c++ exceptions", func(t *testing.T) {
		goOn := filepath.Join(t.TempDir(), "go")
		bin := fixture.C(t, "pad_throwkill.cc", "-O1", "-g")
		child, lines := padsKilledWith(t, bin, "--format=text", "middle", "middle has no pad", goOn)
		goOnLast(t, goOn, lines, child, "done caught=0 cleanups=0")
	})
	t.Run("signal calls", func(t *testing.T) {
		goOn := filepath.Join(t.TempDir(), "go")
		child, lines := padsTracerKilled(t, "afterkill", goOn)
		goOnLast(t, goOn, lines, child, "afterkill 1")
	})
	// The loader's hook is a trap pad, not an int3: a dlopen after the
	// tracer's death runs through it (an int3 there was a fatal SIGTRAP).
	t.Run("dlopen", func(t *testing.T) {
		goOn := filepath.Join(t.TempDir(), "go")
		child, lines := padsTracerKilled(t, "afterkill", goOn, etPlug(t))
		goOnLast(t, goOn, lines, child, "dlopen 10")
	})
}

// goOnLast creates goOn, which lets the command go on, and wants want as
// its last line, then the end of its output: it exited.
func goOnLast(t *testing.T, goOn string, lines *bufio.Scanner, child int, want string) {
	t.Helper()
	if err := os.WriteFile(goOn, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var last string
	for lines.Scan() {
		last = lines.Text()
	}
	if last != want {
		t.Fatalf("the command's last line %q, want %q (pid %d)", last, want, child)
	}
}

// padsTracerKilled runs et_work args under utap with work's pad, waits
// for events, SIGKILLs the tracer and its supervisor, and returns the
// command's pid and the rest of its output.
func padsTracerKilled(t *testing.T, args ...string) (int, *bufio.Scanner) {
	t.Helper()
	return padsKilledWith(t, etWork(t), "--entry-only", "work(arg1)", "work has no pad", args...)
}

// padsKilledWith is padsTracerKilled for bin probed by spec, which must
// take a pad (else noPad).
func padsKilledWith(t *testing.T, bin, mode, spec, noPad string, args ...string) (int, *bufio.Scanner) {
	t.Helper()
	dir := t.TempDir()
	out, errPath := filepath.Join(dir, "events"), filepath.Join(dir, "stderr")
	cmd, lines, child := startReady(t, errPath, bin, append([]string{"run", "-v", "--backend", "ptrace", mode, "-o", out, "-e", spec, "--", bin}, args...)...)
	waitEvents(t, out, fileText(errPath))
	if !strings.Contains(fileText(errPath).String(), "in-process pad") {
		t.Fatalf("%s:\n%s", noPad, fileText(errPath))
	}
	tracer := descendant(t, cmd.Process.Pid, utapBin)
	syscall.Kill(tracer, syscall.SIGKILL)
	syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
	cmd.Process.Wait()
	waitGone(t, tracer)
	return child, lines
}

// startReady starts utap with args, its stderr into errPath, and waits
// for its command, bin, to say "ready" on the pipe it returns; the
// command's pid with it. Both are killed when the test ends.
func startReady(t *testing.T, errPath, bin string, args ...string) (*exec.Cmd, *bufio.Scanner, int) {
	t.Helper()
	cmd := exec.Command(utapBin, args...)
	stdout, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdout.Close() })
	errf, err := os.Create(errPath)
	if err != nil {
		t.Fatal(err)
	}
	defer errf.Close()
	cmd.Stdout, cmd.Stderr = w, errf
	err = cmd.Start()
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() || lines.Text() != "ready" {
		t.Fatalf("the command said %q, want ready", lines.Text())
	}
	child := descendant(t, cmd.Process.Pid, bin)
	t.Cleanup(func() { syscall.Kill(child, syscall.SIGKILL) })
	return cmd, lines, child
}

// cpuTicks is a process's user+system CPU time, in clock ticks.
func cpuTicks(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatalf("the command is gone: %v", err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	var u, s int
	fmt.Sscan(f[11], &u)
	fmt.Sscan(f[12], &s)
	return u + s
}
