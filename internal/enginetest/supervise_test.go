//go:build linux && amd64

package enginetest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/utap/utap/internal/need"
)

// TestCLIKilledAttach: kill -9 of the utap a user started, attached to a
// busy process: the tracer behind it removes every probe and detaches, and
// the process runs on with its memory as before.
func TestCLIKilledAttach(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			b.need(t)
			if buildErr != nil {
				t.Fatal(buildErr)
			}
			bin := etWork(t)
			tr, before, ours := loopTracee(t, bin)
			out := filepath.Join(t.TempDir(), "events")
			cmd, _ := attachWaiting(t, out, "-q", "--backend", b.name, "-p", fmt.Sprint(tr.pid), "-o", out, "-e", "work(arg1)")
			tracer := killSupervisor(t, cmd)
			waitGone(t, tracer)
			checkLeftAlone(t, tr, bin, before, ours)
		})
	}
}

// TestCLIKilledRun: kill -9 of `utap run`: the command is not taken with
// it; it runs on, untraced, on both engines.
func TestCLIKilledRun(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			b.need(t)
			r := runLoop(t, b.name)
			waitEvents(t, r.out, r.stderr)
			waitGone(t, killSupervisor(t, r.cmd))
			r.runsOn(t)
			if n := statusField(t, r.child, "TracerPid"); n != "0" {
				t.Errorf("the command is still traced by %s", n)
			}
		})
	}
}

// loopRun is `utap run` of et_work's loop mode, its command's output read
// line by line.
type loopRun struct {
	cmd    *exec.Cmd
	lines  *bufio.Scanner
	child  int // the command
	out    string
	stderr fileText
}

// runLoop starts `utap run -q --backend backend -e work(arg1) -o OUT --
// et_work loop` and waits for the command's "ready". Its stdout and stderr
// are files, not pipes os/exec copies: Wait would wait for the command,
// which holds them and outlives utap in these tests.
func runLoop(t *testing.T, backend string) *loopRun {
	t.Helper()
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	bin := etWork(t)
	dir := t.TempDir()
	r := &loopRun{out: filepath.Join(dir, "events"), stderr: fileText(filepath.Join(dir, "stderr"))}
	r.cmd = exec.Command(utapBin, "run", "-q", "--backend", backend, "-o", r.out, "-e", "work(arg1)", "--", bin, "loop")
	stdout, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdout.Close() })
	errf, err := os.Create(string(r.stderr))
	if err != nil {
		t.Fatal(err)
	}
	defer errf.Close()
	r.cmd.Stdout, r.cmd.Stderr = w, errf
	err = r.cmd.Start()
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.cmd.Process.Kill() })
	r.lines = bufio.NewScanner(stdout)
	if !r.lines.Scan() || r.lines.Text() != "ready" {
		t.Fatalf("the command said %q, want ready", r.lines.Text())
	}
	r.child = descendant(t, r.cmd.Process.Pid, bin)
	t.Cleanup(func() { syscall.Kill(r.child, syscall.SIGKILL) })
	return r
}

// runsOn checks that the command goes on ticking once the trace is over,
// neither stopped nor a zombie.
func (r *loopRun) runsOn(t *testing.T) {
	t.Helper()
	for i := 0; i < 2; i++ {
		if !r.lines.Scan() || !strings.HasPrefix(r.lines.Text(), "tick") {
			t.Fatalf("the command said %q after the trace, want ticks", r.lines.Text())
		}
	}
	if st := statusField(t, r.child, "State"); !strings.HasPrefix(st, "S") && !strings.HasPrefix(st, "R") {
		t.Errorf("the command's state after the trace: %q", st)
	}
}

// fileText is a file's content, for messages.
type fileText string

func (f fileText) String() string {
	b, _ := os.ReadFile(string(f))
	return string(b)
}

// attachWaiting starts `utap attach ARGS...`, killed when the test ends,
// and waits for its first events in out.
func attachWaiting(t *testing.T, out string, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(utapBin, append([]string{"attach"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	waitEvents(t, out, &stderr)
	return cmd, &stderr
}

// waitEvents waits until the trace has written a few events to out.
func waitEvents(t *testing.T, out string, stderr fmt.Stringer) {
	t.Helper()
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		data, _ := os.ReadFile(out)
		if bytes.Count(data, []byte("\n")) >= 3 {
			return
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("no events after 10s; stderr %q", stderr.String())
		}
	}
}

// killSupervisor sends SIGKILL to the utap the test started and returns
// the pid of the tracer it supervised.
func killSupervisor(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	tracer := descendant(t, cmd.Process.Pid, utapBin)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	// Not cmd.Wait: it would wait for the copy of utap's output, whose pipe
	// the tracer (and, in run mode, the command) still hold open.
	cmd.Process.Wait()
	return tracer
}

// descendant is the pid of the first process below pid running exe.
func descendant(t *testing.T, pid int, exe string) int {
	t.Helper()
	for start := time.Now(); time.Since(start) < 5*time.Second; time.Sleep(10 * time.Millisecond) {
		if d := findDescendant(pid, exe); d != 0 {
			return d
		}
	}
	t.Fatalf("no process running %s below pid %d", exe, pid)
	return 0
}

func findDescendant(pid int, exe string) int {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, c := range strings.Fields(string(b)) {
			var child int
			fmt.Sscan(c, &child)
			if path, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", child)); path == exe {
				return child
			}
			if d := findDescendant(child, exe); d != 0 {
				return d
			}
		}
	}
	return 0
}

// waitGone waits for the tracer to have exited (a zombie whose threads
// have all exited counts: its tracees were detached by then).
func waitGone(t *testing.T, pid int) {
	t.Helper()
	for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(20 * time.Millisecond) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return
		}
		// A zombie leader: gone once its other threads are (the one that
		// traced may still be exiting, its tracees traced until it has).
		tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		if f := strings.Fields(string(b)); len(f) > 2 && f[2] == "Z" && len(tasks) <= 1 {
			return
		}
	}
	t.Fatalf("the tracer (pid %d) still runs 10s after its supervisor was killed", pid)
}

// TestCLITracerKilledTraps: kill -9 of the tracer alone (the OOM
// killer's pick), tracing every system call on the ptrace engine: the
// calls without a pad (rt_sigreturn after each of the command's signal
// handlers, the original syscall a restart goes to) trap at int3s, which
// would kill it with SIGTRAP at their next hit. The supervisor takes
// them out (internal/rescue) and says so; the command runs to its end.
func TestCLITracerKilledTraps(t *testing.T) {
	cmd, lines, child, errPath, goOn := afterkillRun(t)
	// The command's loop makes its calls in pads (access), never stopped:
	// the kill cannot find it at a trap, whose SIGTRAP nothing could undo.
	syscall.Kill(descendant(t, cmd.Process.Pid, utapBin), syscall.SIGKILL)
	cmd.Wait() // the supervisor ends once the int3s are out
	if msg := fileText(errPath).String(); !strings.Contains(msg, "breakpoints taken out of 1 traced process(es)") || strings.Contains(msg, "left in it") {
		t.Fatalf("the supervisor said:\n%s", msg)
	}
	// SIGALRM every 100 µs for 400,000 calls, sigaction, sigprocmask,
	// raise: each handler returns through rt_sigreturn's trap site.
	goOnLast(t, goOn, lines, child, "afterkill 1")
}

// TestCLITracerKilledFiltered: the tracer killed alone where run mode's
// seccomp filter is in (--no-pads): the filter stops every probed call
// for a tracer, and with none the kernel fails it with ENOSYS (the
// command dies at its exit_group). The supervisor seizes the command the
// moment the dying tracer lets it go and lets its calls run until it
// exits (rescue.Tend), then ends.
func TestCLITracerKilledFiltered(t *testing.T) {
	cmd, lines, child, errPath, goOn := afterkillRun(t, "--no-pads")
	if n := statusField(t, child, "Seccomp"); n != "2" {
		t.Fatalf("the command's seccomp mode %q, want 2 (a filter)", n)
	}
	// Its loop's access calls stop at the filter; one made in the moment
	// between the tracer's death and the supervisor's seize fails with
	// ENOSYS, which the loop takes for "not yet".
	syscall.Kill(descendant(t, cmd.Process.Pid, utapBin), syscall.SIGKILL)
	// Untraced, its access calls fail for good: it would loop forever.
	stuck := time.AfterFunc(time.Minute, func() { syscall.Kill(child, syscall.SIGKILL) })
	defer stuck.Stop()
	// The supervisor traces it from here on: its signal storm's returns
	// (rt_sigreturn) made untraced would fail.
	const tending = "runs utap's seccomp filter, whose calls fail untraced: utap traces it until it exits"
	for start := time.Now(); !strings.Contains(fileText(errPath).String(), tending); time.Sleep(10 * time.Millisecond) {
		if time.Since(start) > 30*time.Second {
			t.Fatalf("the supervisor does not trace the command; it said:\n%s", fileText(errPath))
		}
	}
	goOnLast(t, goOn, lines, child, "afterkill 1")
	cmd.Wait() // the supervisor ends with the command
	if msg := fileText(errPath).String(); !strings.Contains(msg, "was killed by SIGKILL; its breakpoints taken out of 1 traced process(es)") {
		t.Fatalf("the supervisor said:\n%s", msg)
	}
}

// afterkillRun starts `utap run --backend ptrace FLAGS` of et_work's
// afterkill mode, every system call traced, and waits for its events:
// the command's output, pid, utap's stderr file and the file that lets
// the command go on.
func afterkillRun(t *testing.T, flags ...string) (cmd *exec.Cmd, lines *bufio.Scanner, child int, errPath, goOn string) {
	t.Helper()
	need.Root(t)
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	bin := etWork(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "events")
	errPath, goOn = filepath.Join(dir, "stderr"), filepath.Join(dir, "go")
	args := append(append([]string{"run", "--backend", "ptrace"}, flags...), "-o", out, "--", bin, "afterkill", goOn)
	cmd, lines, child = startReady(t, errPath, bin, args...)
	waitEvents(t, out, fileText(errPath))
	return cmd, lines, child, errPath, goOn
}
