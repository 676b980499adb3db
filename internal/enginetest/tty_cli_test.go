//go:build linux && amd64

package enginetest

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
)

// pty opens a pseudo-terminal: its master, to read, and its slave, a
// terminal for a command's standard streams.
func pty(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	fd := int(m.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Raw: no \r added, no echo.
	tio, err := unix.IoctlGetTermios(int(s.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	tio.Oflag &^= unix.OPOST
	tio.Lflag &^= unix.ECHO | unix.ICANON
	if err := unix.IoctlSetTermios(int(s.Fd()), unix.TCSETS, tio); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(); s.Close() })
	return m, s
}

// utapOnTerminal runs utap with a terminal for its standard streams, as
// a user types it, and returns what the terminal showed.
func utapOnTerminal(t *testing.T, args ...string) string {
	t.Helper()
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	m, s := pty(t)
	cmd := exec.Command(utapBin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = s, s, s
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.Close() // the command's copies are the slave's last: EIO on the master after them
	var out bytes.Buffer
	read := make(chan error, 1)
	go func() { _, err := io.Copy(&out, m); read <- err }()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("utap %q: %v", args, err)
		}
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Fatalf("utap %q still running after a minute", args)
	}
	<-read // EIO: every slave closed, what they wrote read
	return out.String()
}

// terminalLines is the lines a terminal showed that keep wants, without
// their "[pid N] " (pidPrefix).
func terminalLines(out string, keep func(string) bool) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if l = pidPrefix.ReplaceAllString(strings.TrimRight(l, "\r"), ""); keep(l) {
			lines = append(lines, l)
		}
	}
	return lines
}

// TestCLIPadsTerminalOrder: on the terminal the command writes to, a
// call's line comes before what the command prints after the call, as
// under strace and ltrace: five work(i, 0) calls each followed by a
// signal handler's write. A program with libc's write functions waits at
// its writes to the terminal (sync points, said with -v); a static one,
// without them, after each record (probe.Config.Sync).
func TestCLIPadsTerminalOrder(t *testing.T) {
	need.Root(t)
	progs := []struct {
		name, bin string
		syncs     bool
	}{
		{"dynamic", etWork(t), true},
		{"static", fixture.C(t, "et_work.c", "-static", "-O1", "-g", "-pthread"), false},
	}
	for _, pr := range progs {
		for _, extra := range [][]string{nil, {"--entry-only"}} {
			args := append([]string{"run", "--backend", "ptrace", "-v"}, extra...)
			out := utapOnTerminal(t, append(args, "-e", "work(arg1, arg2)", "--", pr.bin, "signals")...)
			got := terminalLines(out, func(l string) bool {
				// Signal lines come from the tracer's stops, not the pads.
				return l != "" && !strings.HasPrefix(l, "+++") && !strings.HasPrefix(l, "---") && !strings.HasPrefix(l, "utap: ")
			})
			var want []string
			for i := range 5 {
				if extra == nil {
					want = append(want, fmt.Sprintf("work(%d, 0) = %d", i, i))
				} else {
					want = append(want, fmt.Sprintf("work(%d, 0)", i))
				}
				want = append(want, "usr1")
			}
			want = append(want, "signals 5")
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("%s %v: the terminal showed\n%s\nwant\n%s", pr.name, extra, out, strings.Join(want, "\n"))
			}
			if syncs := strings.Contains(out, "the trace's lines wait for its writes to the terminal (sync points)"); syncs != pr.syncs {
				t.Errorf("%s %v: sync points %v, want %v:\n%s", pr.name, extra, syncs, pr.syncs, out)
			}
		}
	}
}

// TestCLIPadsTerminalOrderFork: a followed fork child's copies of the
// sync points take its waits once it has a ring of its own, and an
// exec'd image gets its own: in each process, a call's line comes before
// what it prints after the call.
func TestCLIPadsTerminalOrderFork(t *testing.T) {
	need.Root(t)
	bin := etWork(t)
	t.Run("fork", func(t *testing.T) {
		out := utapOnTerminal(t, "run", "--backend", "ptrace", "-v", "-f", "-e", "work(arg1, arg2)", "--", bin, "forkprint")
		got := terminalLines(out, func(l string) bool {
			return strings.HasPrefix(l, "work(") || strings.HasPrefix(l, "parent ") || strings.HasPrefix(l, "child ")
		})
		var want []string
		for k, who := range []string{"child", "parent"} {
			for i := range 3 {
				want = append(want, fmt.Sprintf("work(%d, %d) = %d", i, 1-k, i+1-k), fmt.Sprintf("%s %d", who, i))
			}
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("the terminal showed\n%s\nwant, in order\n%s", out, strings.Join(want, "\n"))
		}
	})
	t.Run("exec", func(t *testing.T) {
		out := utapOnTerminal(t, "run", "--backend", "ptrace", "-v", "-e", "work(arg1, arg2)", "--", bin, "exec")
		if n := strings.Count(out, "(sync points), not each call"); n != 2 {
			t.Errorf("%d images waiting at their writes, want 2:\n%s", n, out)
		}
		got := terminalLines(out, func(l string) bool {
			return strings.HasPrefix(l, "work(") || l == "exec" || strings.HasPrefix(l, "child ")
		})
		want := []string{"work(1, 1) = 2", "exec", "work(0, 100) = 100", "work(1, 100) = 101", "work(2, 100) = 102", "child 303"}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("the terminal showed\n%s\nwant, in order\n%s", out, strings.Join(want, "\n"))
		}
	})
}

// TestCLIBreakpointsTerminalOrder: on the command's terminal a stop's
// lines are written before its thread runs on (not after, off the path
// to PTRACE_CONT, as into a file): with breakpoints, a call's line comes
// before what the program writes right after the call returns.
func TestCLIBreakpointsTerminalOrder(t *testing.T) {
	need.Root(t)
	out := utapOnTerminal(t, "run", "--backend", "ptrace", "-q", "--no-pads", "-e", "work(arg1, arg2)", "--", etWork(t), "forkprint")
	got := terminalLines(out, func(l string) bool { return strings.HasPrefix(l, "work(") || strings.HasPrefix(l, "parent ") })
	var want []string
	for i := range 3 {
		want = append(want, fmt.Sprintf("work(%d, 0) = %d", i, i), fmt.Sprintf("parent %d", i))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the terminal showed\n%s\nwant, in order\n%s", out, strings.Join(want, "\n"))
	}
}

// TestCLIAutoBackendTerminal: on the command's terminal, --backend auto
// takes the ptrace engine where it would take the kernel's (a site
// inside a function has no pad), and says why: the kernel engine's lines
// come as it reads them.
func TestCLIAutoBackendTerminal(t *testing.T) {
	need.Root(t)
	bin := etWork(t)
	out := utapOnTerminal(t, "run", "-e", "work(arg1, arg2)", "-e", "work+4", "--", bin, "signals")
	if !strings.Contains(out, "utap: backend ptrace: the trace shares the command's terminal") {
		t.Fatalf("the terminal showed\n%s", out)
	}
	got := terminalLines(out, func(l string) bool {
		return strings.HasPrefix(l, "usr1") || strings.HasPrefix(l, "<... work resumed> ) = ")
	})
	var want []string
	for i := range 5 {
		want = append(want, fmt.Sprintf("<... work resumed> ) = %d", i), "usr1")
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the terminal showed\n%s\nwant, in order\n%s", out, strings.Join(want, "\n"))
	}
	// The kernel engine asked for: its lines come as read, and it says so.
	t.Run("uprobe", func(t *testing.T) {
		need.Uprobes(t)
		out := utapOnTerminal(t, "run", "--backend", "uprobe", "-e", "work(arg1, arg2)", "--", bin, "signals")
		if !strings.Contains(out, "utap: backend uprobe on the command's terminal") {
			t.Errorf("the terminal showed\n%s", out)
		}
	})
}

// TestCLITerminalNotShared: lines written to a terminal the command does
// not write to (-o a terminal, the command's output elsewhere), which go
// in batches rather than a write a line (flushEvery), all arrive, in
// order, the last before utap exits.
func TestCLITerminalNotShared(t *testing.T) {
	need.Root(t)
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	bin := etWork(t)
	m, s := pty(t)
	var term bytes.Buffer
	read := make(chan error, 1)
	go func() { _, err := io.Copy(&term, m); read <- err }()
	const n = 5000
	cmd := exec.Command(utapBin, "run", "--backend", "ptrace", "-q", "-o", s.Name(), "-e", "work(arg1, arg2)", "--", bin, "count", fmt.Sprint(n))
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stdout
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	s.Close() // the terminal's last writer: EIO on the master once read
	<-read
	got := terminalLines(term.String(), func(l string) bool { return strings.HasPrefix(l, "work(") })
	if len(got) != n {
		t.Fatalf("the terminal showed %d calls of %d:\n%s", len(got), n, term.String())
	}
	for i, l := range got {
		if want := fmt.Sprintf("work(1, %d) = %d", i, i+1); l != want {
			t.Fatalf("line %d: %q, want %q", i, l, want)
		}
	}
	if !strings.Contains(stdout.String(), fmt.Sprintf("count %d", n*(n+1)/2)) {
		t.Errorf("the command printed %q", stdout.String())
	}
}
