//go:build linux && amd64

package enginetest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
)

// System calls in-process (ptrace/padsys.go): each test runs the same
// command on the pad path (the default: pads and traps,
// ptrace/padsystrap.go, a seccomp filter only once the program writes
// code), on the stop path (--no-pads: behind the filter from the exec)
// and with --no-seccomp (pads and traps, never a filter, as attach
// mode), and checks the lines are the same and that the pads were taken
// (-v says which sites run in-process).

// sysPath is one of the ways the ptrace engine traces system calls.
type sysPath struct {
	name  string
	args  []string
	stops bool // no call in-process
}

var (
	padPath   = sysPath{"pads", nil, false}
	stopPath  = sysPath{"stops", []string{"--no-pads"}, true}
	trapPath  = sysPath{"traps", []string{"--no-seccomp"}, false}
	sysPaths3 = []sysPath{padPath, stopPath, trapPath}
)

// sysPadRun runs `utap run --backend ptrace -v` with path's flags and
// args, its trace in a file; it returns the result and the trace's lines
// (straceLines: joined, masked).
func sysPadRun(t *testing.T, path sysPath, args ...string) (cliResult, []string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "trace")
	argv := append([]string{"run", "--backend", "ptrace", "-v", "-o", out}, path.args...)
	r := utap(t, append(argv, args...)...)
	text, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("%v: %v (stderr %q)", args, err, r.stderr)
	}
	return r, straceLines(string(text))
}

// inProcess says whether utap's -v lines show call's site in-process.
func inProcess(stderr, call string) bool {
	return regexp.MustCompile(`(?m)^utap: ` + call + ` at 0x[0-9a-f]+: in-process`).MatchString(stderr)
}

var (
	childTimes = regexp.MustCompile(`si_utime=[^,]*, si_stime=[^}]*}`)
	sysResult  = regexp.MustCompile(`= \d+$`)
	// Pids (a getppid's, a clone's, a wait4's) differ per run: every
	// number of two digits or more is masked, pids of three digits too
	// (a fresh machine's), the lines compared being one program's.
	bigNumber = regexp.MustCompile(`\bP\d+\b|\b\d{2,}\b`)
)

// sysPadPaths runs args on each of sysPaths3, wants exit 0 and calls
// in-process but on the stop path, and returns each path's lines.
func sysPadPaths(t *testing.T, calls []string, args ...string) [][]string {
	t.Helper()
	var out [][]string
	for _, path := range sysPaths3 {
		r, lines := sysPadRun(t, path, args...)
		if r.code != 0 {
			t.Fatalf("%s: exit %d, stderr %q", path.name, r.code, r.stderr)
		}
		for _, call := range calls {
			if in := inProcess(r.stderr, call); in == path.stops {
				t.Errorf("%s: %s in-process %v", path.name, call, in)
			}
		}
		out = append(out, lines)
	}
	return out
}

// TestSysPadGetppidLoop: 100,000 getppid calls, every one a line, the
// same lines as the stop path's, made in-process.
func TestSysPadGetppidLoop(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "sys_pad.c")
	const n = 100000
	got := make([][]string, len(sysPaths3))
	for i, lines := range sysPadPaths(t, []string{"getppid"}, "-e", "trace=getppid", "--", bin, "loop", strconv.Itoa(n)) {
		for _, l := range lines {
			if strings.HasPrefix(l, "getppid(") {
				// The parent is the tracer: its pid differs per run.
				got[i] = append(got[i], sysResult.ReplaceAllString(l, "= PPID"))
			}
		}
		if len(got[i]) != n {
			t.Errorf("%s: %d getppid lines, want %d", sysPaths3[i].name, len(got[i]), n)
		}
	}
	sameAsStops(t, got)
}

// timeLeft is the time a ppoll or select had left, as strace shows it.
var timeLeft = regexp.MustCompile(`left \{tv_sec=\d+, tv_nsec=\d+\}`)

// TestSysPadPoll: poll, ppoll and epoll_wait in-process (poll's array
// read once, for the arguments and for revents: the kernel writes only
// revents), with the stop path's lines: a ready fd and a quiet one, none,
// an unreadable array, and 3,000 fds, shown as strace shows them (-s's
// 32, then "..."); ppoll with a timeout and a mask; 40 epoll events (32
// shown), 2, and an unreadable array.
func TestSysPadPoll(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "sys_pad.c")
	got := make([][]string, len(sysPaths3))
	calls := []string{"poll", "ppoll", "epoll_wait"}
	for i, lines := range sysPadPaths(t, calls, "-e", "trace=poll,ppoll,epoll_wait", "--", bin, "poll") {
		for _, l := range lines {
			if !strings.HasPrefix(l, "+++") {
				// ppoll's time left of its 1 µs is what the clock says.
				got[i] = append(got[i], timeLeft.ReplaceAllString(straceAddr.ReplaceAllString(l, "ADDR"), "left {TIME}"))
			}
			if strings.Contains(l, ", 3000, 0)") && (strings.Count(l, "{fd=") != 64 || !strings.Contains(l, "POLLIN}, ...], 3000, 0) = 1500 (")) {
				t.Errorf("%s: 3,000 fds not cut at 32: %.300s", sysPaths3[i].name, l)
			}
			if strings.Contains(l, "], 64, 0) = 40") && (strings.Count(l, "{events=") != 32 || !strings.Contains(l, "u64=31}}, ...], 64, 0)")) {
				t.Errorf("%s: 40 events not cut at 32: %.300s", sysPaths3[i].name, l)
			}
		}
		if len(got[i]) != 8 {
			t.Errorf("%s: %d lines, want 8:\n%s", sysPaths3[i].name, len(got[i]), strings.Join(lines, "\n"))
		}
	}
	sameAsStops(t, got)
}

// TestSysPadMixedAreas: calls whose values take the records' small area
// (getppid, close) between calls that take the large one (openat's path),
// 20,000 rounds in-process: every line, in the program's order, as the
// stop path writes them.
func TestSysPadMixedAreas(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "sys_pad.c")
	const n = 20000
	got := make([][]string, len(sysPaths3))
	for i, lines := range sysPadPaths(t, []string{"getppid", "openat", "close"}, "-e", "trace=getppid,openat,close", "--", bin, "mixed", strconv.Itoa(n)) {
		name := sysPaths3[i].name
		seen := false
		for _, l := range lines {
			seen = seen || strings.HasPrefix(l, "getppid(")
			if seen && !strings.HasPrefix(l, "+++") {
				got[i] = append(got[i], sysResult.ReplaceAllString(l, "= N"))
			}
		}
		if len(got[i]) != 3*n {
			t.Errorf("%s: %d lines from the first getppid, want %d", name, len(got[i]), 3*n)
		}
		round := []string{"getppid() = N", `openat(AT_FDCWD, "/dev/null", O_RDONLY) = N`, "close(3) = N"}
		for k, l := range got[i] {
			if l != round[k%3] {
				t.Fatalf("%s: line %d is %q, want %q", name, k, l, round[k%3])
			}
		}
	}
	sameAsStops(t, got)
}

// TestSysPadIovecs: writev and readv run in-process, their iovecs read by
// the pad as the stop path reads them (the bytes of each element, cut at
// -s and, for readv, at what the call read; an unreadable element, more
// elements than a capture holds, an unreadable array, none).
func TestSysPadIovecs(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "sys_pad.c")
	keep := func(l string) bool {
		return strings.HasPrefix(l, "writev(") || strings.HasPrefix(l, "readv(")
	}
	stderr := sysPadSame(t, keep, "trace=writev,readv", bin, "iov")
	for _, call := range []string{"writev", "readv"} {
		if !inProcess(stderr, call) {
			t.Errorf("%s not in-process:\n%s", call, stderr)
		}
	}
	// An element whose bytes cannot be read shows its address (masked
	// here), as strace shows it, the others' bytes still shown.
	unread := regexp.MustCompile(`^writev\(\d+, \[\{iov_base=0x\?, iov_len=4\}, \{iov_base="hel", iov_len=3\}\]`)
	// A failed readv read nothing: strace shows its elements' addresses.
	failed := regexp.MustCompile(`^readv\(-1, \[\{iov_base=0x\?, iov_len=8\}, \{iov_base=0x\?, iov_len=64\}\], 2\) += -1 EBADF`)
	_, lines := sysPadRun(t, padPath, "-e", "trace=writev,readv", "--", bin, "iov")
	need.Uprobes(t)
	out := filepath.Join(t.TempDir(), "trace")
	utap(t, "run", "--backend", "uprobe", "-o", out, "-e", "trace=writev,readv", "--", bin, "iov")
	text, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	ulines := straceLines(string(text))
	for engine, lines := range map[string][]string{"ptrace": lines, "uprobe": ulines} {
		if !slices.ContainsFunc(lines, unread.MatchString) {
			t.Errorf("%s: no writev line with an unreadable element's address:\n%s", engine, strings.Join(lines, "\n"))
		}
		if !slices.ContainsFunc(lines, failed.MatchString) {
			t.Errorf("%s: no failed readv line with its elements:\n%s", engine, strings.Join(lines, "\n"))
		}
	}
}

// sysPadSame runs argv on each of sysPaths3 and wants the same stdout,
// exit 0, and the same lines (those keep selects, sorted: the threads'
// order differs); it returns the pad and trap paths' stderr.
func sysPadSame(t *testing.T, keep func(string) bool, spec string, argv ...string) string {
	t.Helper()
	got := make([][]string, len(sysPaths3))
	stdout := make([]string, len(sysPaths3))
	var stderr string
	for i, path := range sysPaths3 {
		r, lines := sysPadRun(t, path, append([]string{"-f", "-e", spec, "--"}, argv...)...)
		if r.code != 0 {
			t.Fatalf("%s: exit %d, stderr %q", path.name, r.code, r.stderr)
		}
		for _, l := range lines {
			if keep(l) {
				// Pids differ per run, and whether a tid had a line
				// before the call that returns it (P1...) with the
				// threads' order.
				// A child's CPU times in a SIGCHLD are a clock's.
				l = childTimes.ReplaceAllString(l, "si_utime=T, si_stime=T}")
				got[i] = append(got[i], bigNumber.ReplaceAllString(l, "N"))
			}
		}
		slices.Sort(got[i])
		stdout[i] = r.stdout
		if !path.stops {
			stderr += r.stderr
		}
	}
	for i, path := range sysPaths3 {
		if stdout[i] != stdout[1] {
			t.Errorf("stdout %q on %s, %q on the stop path", stdout[i], path.name, stdout[1])
		}
	}
	if len(got[0]) == 0 {
		t.Error("no line kept")
	}
	sameAsStops(t, got)
	return stderr
}

// sameAsStops wants each path's lines (sysPaths3's order) the stop
// path's.
func sameAsStops(t *testing.T, got [][]string) {
	t.Helper()
	for i, path := range sysPaths3 {
		if !slices.Equal(got[i], got[1]) {
			t.Errorf("lines differ:\n%s:\n%s\nstops:\n%s", path.name, strings.Join(got[i], "\n"), strings.Join(got[1], "\n"))
		}
	}
}

// TestSysPadSignalRead: a signal interrupts a read blocked in-process;
// with SA_RESTART it goes on (restarted from the original syscall, on the
// stop path), without it fails with EINTR. The lines are the stop path's:
// the interrupted read "= ? ERESTARTSYS", the signal, the restarted read.
func TestSysPadSignalRead(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "sys_pad.c")
	for _, mode := range []string{"restart", "intr"} {
		t.Run(mode, func(t *testing.T) {
			keep := func(l string) bool { return strings.HasPrefix(l, "read(3,") || strings.HasPrefix(l, "--- SIGUSR1") }
			stderr := sysPadSame(t, keep, "trace=read", bin, mode)
			if !inProcess(stderr, "read") {
				t.Errorf("no read in-process:\n%s", stderr)
			}
		})
	}
}

// TestSysPadBadBuffers: calls given bad buffers (a PROT_NONE page, an
// address below mmap_min_addr, a string running into PROT_NONE) and a
// string whose NUL is its page's last byte. A pad reads by loads while
// the tracer lives: the bad ones fault, the tracer sends the thread to
// the load's fix-up, and the lines are the stop path's, as strace prints
// them (an address for what could not be read); the program lives.
func TestSysPadBadBuffers(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "sys_pad.c")
	want, _ := untraced(t, []string{bin, "badbuf"})
	got := make([][]string, len(sysPaths3))
	for i, path := range sysPaths3 {
		r, lines := sysPadRun(t, path, "-e", "trace=write,openat", "--", bin, "badbuf")
		if r.code != 0 || r.stdout != want {
			t.Fatalf("%s: exit %d, stdout %q, want %q; stderr %q", path.name, r.code, r.stdout, want, r.stderr)
		}
		if !path.stops && (!inProcess(r.stderr, "write") || !inProcess(r.stderr, "openat")) {
			t.Errorf("%s: write and openat not in-process:\n%s", path.name, r.stderr)
		}
		got[i] = lines // addresses masked: 0x?
	}
	sameAsStops(t, got)
	trace := strings.Join(got[0], "\n")
	for line, n := range map[string]int{
		`write(1, 0x?, 4) = -1 EFAULT (Bad address)`:                                           6,
		`openat(AT_FDCWD, 0x?, O_RDONLY) = -1 EFAULT (Bad address)`:                            6,
		`openat(AT_FDCWD, "/nonexistent/x", O_RDONLY) = -1 ENOENT (No such file or directory)`: 3,
	} {
		if c := strings.Count(trace, line); c != n {
			t.Errorf("%d of %q, want %d:\n%s", c, line, n, trace)
		}
	}
}

// TestSysPadCancel: a thread blocked in read in-process is cancelled as
// it is untraced, its frame's destructor run: glibc 2.36 unwinds from
// the interrupted rip, which the tracer has moved to libc's syscall (in
// the pad, with no unwind info, the unwinding would stop short).
func TestSysPadCancel(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "sys_cancel.cc")
	want, code := untraced(t, []string{bin})
	if want != "unwound\ncanceled\n" || code != 0 {
		t.Fatalf("untraced: %q, exit %d", want, code)
	}
	for _, path := range []sysPath{padPath, trapPath} {
		r, _ := sysPadRun(t, path, "-e", "trace=read", "--", bin)
		if r.code != 0 || r.stdout != want || !inProcess(r.stderr, "read") {
			t.Errorf("%s: exit %d, stdout %q, want %q; stderr %q", path.name, r.code, r.stdout, want, r.stderr)
		}
	}
}

// TestSysPadForks: fork, vfork with execve, a thread: the clone family
// and execve keep their stops, the children are followed (-f), and their
// calls made in-process are shown as on the stop path.
func TestSysPadForks(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "sys_pad.c")
	keep := func(l string) bool { return !strings.HasPrefix(l, "+++") }
	stderr := sysPadSame(t, keep, "trace=getppid,clone,clone3,fork,vfork,execve,wait4,exit_group", bin, "fork")
	if !inProcess(stderr, "getppid") || inProcess(stderr, "clone") || inProcess(stderr, "execve") {
		t.Errorf("getppid in-process, clone and execve stopping, wanted:\n%s", stderr)
	}
}

// TestSysPadOwnFilter: a program that installs its own seccomp filter,
// which kills it for process_vm_readv (a pad's read), keeps working:
// its pads are taken out before the filter goes in.
func TestSysPadOwnFilter(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "sys_pad.c")
	stderr := sysPadSame(t, func(string) bool { return true }, "trace=getppid,write", bin, "seccomp")
	if !strings.Contains(stderr, "installs a seccomp filter") || !inProcess(stderr, "write") {
		t.Errorf("pads in, then taken out, wanted:\n%s", stderr)
	}
}

// TestSysPadTracerKilled: the tracer SIGKILLed while the program calls
// getppid in-process: the program finishes, every call answered (on the
// stop path they would fail with ENOSYS: the filter stays). On pads and
// traps too: its calls after the loop (fopen's openat and mmap, exit)
// reach no int3 (a watch pad makes the mmap).
func TestSysPadTracerKilled(t *testing.T) {
	need.Root(t)
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	bin := fixture.C(t, "sys_pad.c")
	for _, path := range []sysPath{padPath, trapPath} {
		t.Run(path.name, func(t *testing.T) {
			dir := t.TempDir()
			pidFile, out := filepath.Join(dir, "pid"), filepath.Join(dir, "trace")
			argv := append(append([]string{"run", "--backend", "ptrace", "-o", out}, path.args...),
				"-e", "trace=getppid", "--", bin, "spin", pidFile, "2000000")
			cmd := exec.Command(utapBin, argv...)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Wait()
			defer cmd.Process.Kill()
			sysWaitFor(t, func() bool { st, err := os.Stat(out); return err == nil && st.Size() > 0 })
			b, _ := os.ReadFile(pidFile)
			status, err := os.ReadFile("/proc/" + strings.TrimSpace(string(b)) + "/status")
			if err != nil {
				t.Fatal(err)
			}
			m := regexp.MustCompile(`TracerPid:\s+(\d+)`).FindSubmatch(status)
			tracer, _ := strconv.Atoi(string(m[1]))
			if tracer == 0 {
				t.Fatal("the program is not traced")
			}
			syscall.Kill(tracer, syscall.SIGKILL)
			sysWaitFor(t, func() bool { st, err := os.Stat(pidFile + ".done"); return err == nil && st.Size() > 0 })
			if done, _ := os.ReadFile(pidFile + ".done"); string(done) != "0\n" {
				t.Errorf("the program's calls failed after the tracer died: %q", done)
			}
		})
	}
}

// TestSysPadCtrlC: SIGINT to utap while a thread is blocked in a read
// made in-process: the program runs on (the trace goes on unseen, the
// filter stays), reads what comes and exits 0.
func TestSysPadCtrlC(t *testing.T) {
	need.Root(t)
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	bin := fixture.C(t, "sys_pad.c")
	cmd := exec.Command(utapBin, "run", "--backend", "ptrace", "-o", filepath.Join(t.TempDir(), "trace"), "-e", "trace=read", "--", bin, "blocked")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outp, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(outp)
	if !lines.Scan() || lines.Text() != "ready" {
		t.Fatalf("first line %q, want ready", lines.Text())
	}
	cmd.Process.Signal(syscall.SIGINT)
	// The input comes after the signal was sent; utap says nothing when
	// it takes it, so it may take it a little after the read returned.
	in.Write([]byte("abc\n"))
	in.Close()
	var rest []string
	for lines.Scan() {
		rest = append(rest, lines.Text())
	}
	err = cmd.Wait()
	if err != nil || !slices.Contains(rest, "got 4") {
		t.Errorf("utap: %v, the program's output after ready: %q", err, rest)
	}
}

// sysWaitFor polls cond until it holds, for a minute at most.
func sysWaitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(time.Minute); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("still waiting after a minute")
		}
	}
}

// TestSysPadSignalStorm: SIGALRM every 100 µs while getppid, read and
// ioctl loop in-process: signals land at the pads' `syscall`, after it, in the
// record, and in read's displaced instructions, which hold a conditional
// branch (glibc's single-threaded read: `cmpb $0,single_threaded; je;
// xor %eax,%eax; syscall`): there the thread is stepped to the pad's
// `syscall` or out by the branch; then ioctl, whose pad reads its
// argument before its `syscall` too (a signal there runs the thread to
// the `syscall`, then to the original's). Each signal is delivered in the
// original code, and every call is still one line.
func TestSysPadSignalStorm(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "sys_pad.c")
	for _, c := range []struct {
		call, mode, line, out string
		n                     int
	}{
		{"getppid", "storm", "getppid() = ", "storm\n", 50000},
		{"read", "readstorm", `read(3, "\0", 1) = 1`, "readstorm 20000\n", 20000},
		{"ioctl", "ioctlstorm", "ioctl(3, FIONREAD, [5]) = 0", "ioctlstorm 20000\n", 20000},
	} {
		for _, path := range sysPaths3 {
			r, lines := sysPadRun(t, path, "-e", "trace="+c.call, "--", bin, c.mode, strconv.Itoa(c.n))
			calls := 0
			for _, l := range lines {
				if strings.HasPrefix(l, c.line) {
					calls++
				}
			}
			if r.code != 0 || r.stdout != c.out || calls != c.n || inProcess(r.stderr, c.call) == path.stops {
				t.Errorf("%s, %s: exit %d, stdout %q, %d lines of %d", c.call, path.name, r.code, r.stdout, calls, c.n)
			}
		}
	}
}

// TestSysPadDurations: -T and -c run in-process too. The pad takes the
// TSC around its `syscall`, so each line has the call's own duration
// (not the wait for room in a full ring), and -c's summary counts every
// call with its time, as on the stop path.
func TestSysPadDurations(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "sys_pad.c")
	const n = 20000
	dur := regexp.MustCompile(`^getppid\(\) += \d+ <(\d+\.\d{6})>$`)
	for _, path := range []sysPath{padPath, stopPath} {
		stops := path.stops
		r, lines := sysPadRun(t, path, "-T", "-e", "trace=getppid", "--", bin, "loop", strconv.Itoa(n))
		timed := 0
		for _, l := range lines {
			if m := dur.FindStringSubmatch(l); m != nil {
				if d, _ := strconv.ParseFloat(m[1], 64); d < 1 {
					timed++
				}
			}
		}
		if r.code != 0 || timed != n || inProcess(r.stderr, "getppid") == stops {
			t.Errorf("-T, stops=%v: exit %d, %d of %d lines with a duration", stops, r.code, timed, n)
		}
		r, lines = sysPadRun(t, path, "-c", "-e", "trace=getppid", "--", bin, "loop", strconv.Itoa(n))
		row := ""
		for _, l := range lines {
			if f := strings.Fields(l); len(f) > 0 && f[len(f)-1] == "getppid" {
				row = l
			}
		}
		f := strings.Fields(row)
		if r.code != 0 || len(f) < 4 || f[3] != strconv.Itoa(n) || f[1] == "0.000000" || inProcess(r.stderr, "getppid") == stops {
			t.Errorf("-c, stops=%v: exit %d, row %q", stops, r.code, row)
		}
	}
}

// TestSysPadBlockedShows: a thread blocked in a read shows its "read(0, "
// line while it blocks, as under strace, and the line ends when the read
// returns: on the ptrace engine in-process (the drainer finds the thread
// at a pad's syscall) and on stops, and on the kernel engine (its open
// calls' map). The input is written only once the trace shows the line.
func TestSysPadBlockedShows(t *testing.T) {
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	bin := fixture.C(t, "sys_pad.c")
	for _, m := range sysModes {
		t.Run(m.name, func(t *testing.T) {
			m.need(t)
			out := filepath.Join(t.TempDir(), "trace")
			args := append(append([]string{"run", "-v", "-o", out}, m.args...), "-e", "trace=read", "--", bin, "blocked")
			cmd := exec.Command(utapBin, args...)
			in, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			sysWaitFor(t, func() bool {
				b, _ := os.ReadFile(out)
				return strings.Contains(string(b), "read(0, ")
			})
			in.Write([]byte("abc\n"))
			in.Close()
			if err := cmd.Wait(); err != nil {
				t.Fatalf("%v: %s", err, stderr.String())
			}
			text := strings.Join(straceLines(fileText(out).String()), "\n")
			whole := regexpMatch(`(?m)^read\(0, "abc\\n", 16\) += 4$`, text)
			resumed := regexpMatch(`(?m)^read\(0, +<unfinished \.\.\.>$`, text) && regexpMatch(`(?m)^<\.\.\. read resumed>"abc\\n", 16\) += 4$`, text)
			if !whole && !resumed || m.name == "ptrace" && !inProcess(stderr.String(), "read") {
				t.Errorf("lines:\n%s\nstderr:\n%s", text, stderr.String())
			}
		})
	}
}

// TestSysPadInOut: calls whose memory the call changes ([in => out]: an
// ioctl's argument, select's sets, an address length) run in-process,
// that memory read by the pad before the call and after it, with the
// stop path's lines, bad pointers included (EFAULT: the address shown).
func TestSysPadInOut(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "sys_pad.c")
	calls := []string{"ioctl", "pselect6", "getsockname", "accept4", "recvfrom", "getsockopt"}
	spec := "trace=" + strings.Join(append(calls, "prctl"), ",")
	got := sysPadMasked(t, calls, spec, 17, bin, "inout")
	for _, want := range []string{
		"ioctl(3, FIONREAD, [5]) = 0",
		"pselect6(7, [3 5], [6], NULL, {tv_sec=0, tv_nsec=0}, NULL) = 2 (in [3], out [6], left {tv_sec=0, tv_nsec=0})",
		"pselect6(4, [3], NULL, NULL, {tv_sec=0, tv_nsec=0}, {sigmask=[USR1], sigsetsize=8}) = 1 (in [3], left {tv_sec=0, tv_nsec=0})",
		"pselect6(4, [3], NULL, NULL, {tv_sec=0, tv_nsec=0}, {sigmask=0x?, sigsetsize=8}) = -1 EFAULT (Bad address)",
		`getsockname(8, {sa_family=AF_UNIX, sun_path=@"utap-inout"}, [N => N]) = 0`,
		"accept4(8, {sa_family=AF_UNIX}, [N => 2], SOCK_CLOEXEC) = N",
		"getsockopt(N, SOL_SOCKET, SO_TYPE, [2], [4]) = 0",
		"getsockname(8, 0x?, 0x?) = -1 EFAULT (Bad address)",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("no line %q among the pads':\n%s", want, strings.Join(got, "\n"))
		}
	}
	// The kernel engine reads pselect6's sigset in its program too (the
	// process may be gone when a read after the fact would come).
	need.Uprobes(t)
	out := filepath.Join(t.TempDir(), "trace")
	utap(t, "run", "--backend", "uprobe", "-o", out, "-e", "trace=pselect6", "--", bin, "inout")
	text, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want := "pselect6(4, [3], NULL, NULL, {tv_sec=0, tv_nsec=0}, {sigmask=[USR1], sigsetsize=8}) = 1 (in [3], left {tv_sec=0, tv_nsec=0})"
	if lines := straceLines(string(text)); !slices.Contains(lines, want) {
		t.Errorf("uprobe: no line %q:\n%s", want, strings.Join(lines, "\n"))
	}
}

// TestSysPadMsg: sendmsg and recvmsg in-process, their msghdr read by the
// pad as the stop path reads it (the name, the iovecs cut at -s and at
// what recvmsg received, the control data), with the stop path's lines:
// an address, an fd passed, an unreadable element, an unreadable msghdr,
// EAGAIN.
func TestSysPadMsg(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "sys_pad.c")
	got := sysPadMasked(t, []string{"sendmsg", "recvmsg"}, "trace=sendmsg,recvmsg", 8, bin, "msg")
	for _, want := range []string{
		`recvmsg(3, {msg_name={sa_family=AF_INET, sin_port=htons(N), sin_addr=inet_addr("N.0.0.1")}, msg_namelen=N, msg_iov=[{iov_base="hell", iov_len=4}, {iov_base="o world, this is a buffer longer"..., iov_len=N}], msg_iovlen=2, msg_controllen=0, msg_flags=0}, 0) = N`,
		`recvmsg(5, {msg_name=NULL, msg_namelen=0, msg_iov=[{iov_base="hell", iov_len=4}, {iov_base="o ", iov_len=N}], msg_iovlen=2, msg_control=[{cmsg_len=N, cmsg_level=SOL_SOCKET, cmsg_type=SCM_RIGHTS, cmsg_data=[6]}], msg_controllen=N, msg_flags=0}, 0) = 6`,
		`sendmsg(4, {msg_name=NULL, msg_namelen=0, msg_iov=[{iov_base=0x?, iov_len=4}, {iov_base="hel", iov_len=3}], msg_iovlen=2, msg_controllen=0, msg_flags=0}, 0) = -1 EFAULT (Bad address)`,
		`sendmsg(4, 0x?, 0) = -1 EFAULT (Bad address)`,
	} {
		if !slices.Contains(got, want) {
			t.Errorf("no line %q among the pads':\n%s", want, strings.Join(got, "\n"))
		}
	}
}

// sysPadMasked runs argv on each of sysPaths3 with spec, wants calls
// in-process but on the stop path, n lines (the exit's left out) and the
// stop path's on each; it returns the pad path's lines, addresses
// (ADDR) and numbers of two digits or more (N) masked.
func sysPadMasked(t *testing.T, calls []string, spec string, n int, argv ...string) []string {
	t.Helper()
	got := make([][]string, len(sysPaths3))
	for i, lines := range sysPadPaths(t, calls, append([]string{"-e", spec, "--"}, argv...)...) {
		for _, l := range lines {
			if !strings.HasPrefix(l, "+++") {
				got[i] = append(got[i], bigNumber.ReplaceAllString(straceAddr.ReplaceAllString(l, "ADDR"), "N"))
			}
		}
		if len(got[i]) != n {
			t.Errorf("%s: %d lines, want %d:\n%s", sysPaths3[i].name, len(got[i]), n, strings.Join(lines, "\n"))
		}
	}
	sameAsStops(t, got)
	return got[0]
}

// TestSysPadDirents: getdents64 in-process over a directory whose
// entries take more than a record holds (1,000 names, ≈40 KiB): the pad
// captures the first 16 KiB and counts every record, and the line says
// all of them, as the stop path's; an unreadable buffer and a bad fd.
// With -e abbrev=none every entry shows: the call keeps its stops.
func TestSysPadDirents(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "sys_pad.c")
	dir := t.TempDir()
	for i := range 1000 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("an-entry-with-a-longer-name-%04d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := sysPadMasked(t, []string{"getdents64"}, "trace=getdents64", 5, bin, "dirents", dir)
	for _, want := range []string{
		"getdents64(3, 0x? /* N entries */, N) = N",
		"getdents64(3, 0x? /* 0 entries */, N) = 0",
		"getdents64(4, 0x?, N) = -1 EFAULT (Bad address)",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("no line %q among the pads':\n%s", want, strings.Join(got, "\n"))
		}
	}
	entries := regexp.MustCompile(`/\* (\d+) entries \*/`)
	_, lines := sysPadRun(t, padPath, "-e", "trace=getdents64", "--", bin, "dirents", dir)
	n := 0
	for _, l := range lines {
		if m := entries.FindStringSubmatch(l); m != nil {
			k, _ := strconv.Atoi(m[1])
			n += k
		}
	}
	if n != 1002 {
		t.Errorf("%d entries counted, want 1,002:\n%s", n, strings.Join(lines, "\n"))
	}
	r, lines := sysPadRun(t, padPath, "-e", "trace=getdents64", "-e", "abbrev=none", "--", bin, "dirents", dir)
	joined := strings.Join(lines, "\n")
	if inProcess(r.stderr, "getdents64") || strings.Count(joined, "d_name=") != 1002 || strings.Contains(joined, "...") {
		t.Errorf("-e abbrev=none: not every entry shown from stops:\n%.3000s", joined)
	}
}
