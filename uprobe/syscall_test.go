//go:build linux && amd64

package uprobe

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/probe"
	"golang.org/x/sys/unix"
)

// sysFixtureSrc makes the system calls the tests look for: openat of a
// known path, read, write, a failing openat (ENOENT), threads, and a
// fork+exec of itself; marker is there for an ordinary probe.
const sysFixtureSrc = `
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) int marker(int x) { __asm__ volatile(""); return x + 1; }

static void files(void) {
	char buf[64];
	int fd = openat(AT_FDCWD, "/etc/hostname", O_RDONLY);
	if (fd >= 0) {
		read(fd, buf, sizeof buf);
		close(fd);
	}
	write(1, "hello-sys\n", 10);
	openat(AT_FDCWD, "/etc/utap-sys-nonexistent", O_RDONLY);
	marker(41);
}

static void *thread(void *arg) {
	(void)arg;
	int fd = openat(AT_FDCWD, "/etc/hostname", O_RDONLY);
	close(fd);
	return 0;
}

int main(int argc, char **argv) {
	const char *mode = argc > 1 ? argv[1] : "files";
	if (!strcmp(mode, "files")) {
		files();
	} else if (!strcmp(mode, "threads")) {
		pthread_t t[3];
		for (int i = 0; i < 3; i++) pthread_create(&t[i], 0, thread, 0);
		for (int i = 0; i < 3; i++) pthread_join(t[i], 0);
	} else if (!strcmp(mode, "closes")) {
		long n = argc > 2 ? atol(argv[2]) : 0;
		for (long i = 0; i < n; i++) close(-1);
	} else if (!strcmp(mode, "forkexec")) {
		pid_t pid = fork();
		if (pid == 0) {
			// In written memory: an untouched .rodata page is unreadable
			// at sys_enter, and execve has no exit to read it again at.
			char path[32], mode[8];
			strcpy(path, "/proc/self/exe");
			strcpy(mode, "files");
			execl(path, argv[0], mode, (char *)0);
			_exit(127);
		}
		int st;
		waitpid(pid, &st, 0);
	}
	return 0;
}
`

var sysFixture struct {
	once sync.Once
	path string
	err  error
}

// sysBin builds the fixture once per test binary.
func sysBin(t *testing.T) string { return sysBinB(t) }

func sysBinB(t testing.TB) string {
	t.Helper()
	need.Tool(t, "gcc")
	sysFixture.once.Do(func() {
		dir, err := os.MkdirTemp("", "utap-sys")
		if err != nil {
			sysFixture.err = err
			return
		}
		src := filepath.Join(dir, "sysfix.c")
		if sysFixture.err = os.WriteFile(src, []byte(sysFixtureSrc), 0o644); sysFixture.err != nil {
			return
		}
		sysFixture.path = filepath.Join(dir, "sysfix")
		out, err := exec.Command("gcc", "-O1", "-g", "-pthread", "-o", sysFixture.path, src).CombinedOutput()
		if err != nil {
			sysFixture.err = &buildErr{err, out}
		}
	})
	if sysFixture.err != nil {
		t.Fatal(sysFixture.err)
	}
	return sysFixture.path
}

type buildErr struct {
	err error
	out []byte
}

func (e *buildErr) Error() string { return e.err.Error() + "\n" + string(e.out) }

var sysParams = map[int][]string{
	unix.SYS_OPENAT: {"dfd", "filename", "flags", "mode"}, unix.SYS_READ: {"fd", "buf", "count"},
	unix.SYS_WRITE: {"fd", "buf", "count"}, unix.SYS_CLOSE: {"fd"},
	unix.SYS_EXECVE: {"filename", "argv", "envp"}, unix.SYS_EXIT_GROUP: {"error_code"},
}

// sysSite makes the site of a "syscall:NAME ..." spec for call nr.
func sysSite(t testing.TB, text string, nr, probeIdx int) probe.Site {
	t.Helper()
	spec, err := probe.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	s := probe.Site{Spec: spec, Func: spec.Symbol, Syscall: true, SyscallNr: nr, Params: sysParams[nr], Probe: probeIdx}
	if err := s.Bind(); err != nil {
		t.Fatal(err)
	}
	return s
}

// sysRun traces bin mode with sites and returns the events of pid's
// process tree by call name.
func sysRun(t *testing.T, sites []probe.Site, follow bool, argv ...string) ([]probe.Event, string) {
	t.Helper()
	need.Uprobes(t)
	var out bytes.Buffer
	c, res := run(t, &Engine{}, probe.Target{Argv: argv, Stdout: &out, Follow: follow}, sites)
	if res.Lost != 0 {
		t.Errorf("%d events lost", res.Lost)
	}
	return c.evs, out.String()
}

func sysEvents(evs []probe.Event, name string) []probe.Event {
	var r []probe.Event
	for _, e := range evs {
		if e.Sys != nil && e.Func == name {
			r = append(r, e)
		}
	}
	return r
}

func TestSyscallEvents(t *testing.T) {
	bin := sysBin(t)
	sites := []probe.Site{
		sysSite(t, "syscall:openat", unix.SYS_OPENAT, 0),
		sysSite(t, "syscall:read", unix.SYS_READ, 1),
		sysSite(t, "syscall:write", unix.SYS_WRITE, 2),
		sysSite(t, "syscall:close", unix.SYS_CLOSE, 3),
	}
	evs, out := sysRun(t, sites, false, bin, "files")
	if out != "hello-sys\n" {
		t.Errorf("output %q", out)
	}
	host, _ := os.ReadFile("/etc/hostname")
	var opened, failed bool
	for _, e := range sysEvents(evs, "openat") {
		s := e.Sys
		if e.Kind != "return" || !s.Returned || s.Nr != unix.SYS_OPENAT || e.Probe != "syscall:openat" || e.ProbeIndex != 0 {
			t.Errorf("openat event %+v %+v", e, s)
		}
		if e.DurationNs <= 0 || e.TimeNs <= 0 || e.TID == 0 || e.PID == 0 {
			t.Errorf("openat times or ids: %+v", e)
		}
		switch string(s.Entry[0]) {
		case "/etc/hostname\x00":
			opened = s.Ret >= 0 && int32(s.Args[0]) == unix.AT_FDCWD
		case "/etc/utap-sys-nonexistent\x00":
			failed = s.Ret == -int64(unix.ENOENT)
		}
	}
	for _, e := range sysEvents(evs, "openat") {
		t.Logf("openat %q ret %d args %x", e.Sys.Entry[0], e.Sys.Ret, e.Sys.Args)
	}
	if !opened || !failed {
		t.Errorf("openat of /etc/hostname seen %v, failed openat seen %v, in %d events", opened, failed, len(evs))
	}
	var readOK bool
	for _, e := range sysEvents(evs, "read") {
		if e.Sys.Ret == int64(len(host)) && e.Sys.Exit[0] != nil && bytes.HasPrefix(host, e.Sys.Exit[0]) && e.Sys.Entry[0] == nil {
			readOK = true
		}
	}
	if !readOK && len(host) > 0 {
		t.Errorf("no read of /etc/hostname's %d bytes with its contents: %+v", len(host), sysEvents(evs, "read"))
	}
	var wrote bool
	for _, e := range sysEvents(evs, "write") {
		if e.Sys.Ret == 10 && string(e.Sys.Entry[0]) == "hello-sys\n" && e.Sys.Args[0] == 1 {
			wrote = true
		}
	}
	if !wrote {
		t.Errorf("no write of hello-sys: %+v", sysEvents(evs, "write"))
	}
	if len(sysEvents(evs, "close")) == 0 {
		t.Error("no close")
	}
}

func TestSyscallCondition(t *testing.T) {
	bin := sysBin(t)
	for _, tc := range []struct{ spec, want string }{
		{"syscall:openat if ret < 0", "/etc/utap-sys-nonexistent\x00"},
		{`syscall:openat if str(arg2) == "/etc/hostname"`, "/etc/hostname\x00"},
		{`syscall:openat if str(filename) == "/etc/hostname" && ret >= 0`, "/etc/hostname\x00"},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			evs, _ := sysRun(t, []probe.Site{sysSite(t, tc.spec, unix.SYS_OPENAT, 0)}, false, bin, "files")
			if len(evs) != 1 || string(evs[0].Sys.Entry[0]) != tc.want {
				for _, e := range evs {
					t.Logf("%s %q ret %d", e.Func, e.Sys.Entry[0], e.Sys.Ret)
				}
				t.Fatalf("%d events, want one of %q", len(evs), tc.want)
			}
		})
	}
}

func TestSyscallThreads(t *testing.T) {
	bin := sysBin(t)
	evs, _ := sysRun(t, []probe.Site{sysSite(t, `syscall:openat if str(arg2) == "/etc/hostname"`, unix.SYS_OPENAT, 0)}, false, bin, "threads")
	tids := map[int]bool{}
	for _, e := range evs {
		if e.PID == e.TID || e.Sys.Ret < 0 {
			t.Errorf("openat in pid %d tid %d ret %d", e.PID, e.TID, e.Sys.Ret)
		}
		tids[e.TID] = true
	}
	if len(evs) != 3 || len(tids) != 3 {
		t.Errorf("%d openat events in %d threads, want 3 in 3", len(evs), len(tids))
	}
}

// TestSyscallFollowExec: with Follow the forked child and its new image
// are traced; its execve (no return on success) comes at entry.
func TestSyscallFollowExec(t *testing.T) {
	bin := sysBin(t)
	sites := []probe.Site{
		sysSite(t, `syscall:openat if str(arg2) == "/etc/hostname"`, unix.SYS_OPENAT, 0),
		sysSite(t, "syscall:execve", unix.SYS_EXECVE, 1),
		sysSite(t, "syscall:exit_group", unix.SYS_EXIT_GROUP, 2),
	}
	for _, follow := range []bool{false, true} {
		evs, _ := sysRun(t, sites, follow, bin, "forkexec")
		opens, execs, exits := sysEvents(evs, "openat"), sysEvents(evs, "execve"), sysEvents(evs, "exit_group")
		if !follow {
			if len(opens)+len(execs) != 0 || len(exits) != 1 {
				t.Errorf("without -f: %d openat, %d execve, %d exit_group; want only the parent's exit_group", len(opens), len(execs), len(exits))
			}
			continue
		}
		if len(opens) != 1 || len(execs) != 1 || len(exits) != 2 {
			t.Fatalf("with -f: %d openat, %d execve, %d exit_group; want 1, 1, 2", len(opens), len(execs), len(exits))
		}
		x := execs[0].Sys
		if !x.Returned || x.Ret != 0 || execs[0].DurationNs <= 0 || string(x.Entry[0]) != "/proc/self/exe\x00" {
			t.Errorf("execve: returned %v duration %d filename %q", x.Returned, execs[0].DurationNs, x.Entry[0])
		}
		if argv := string(x.Entry[1]); argv != bin+"\x00files\x00\x00" {
			t.Errorf("execve argv %q", argv)
		}
		if opens[0].PID != execs[0].PID {
			t.Errorf("openat in %d, execve in %d", opens[0].PID, execs[0].PID)
		}
	}
}

// TestSyscallUntraced: a process not traced makes no events, though it
// runs the same calls at the same time.
func TestSyscallUntraced(t *testing.T) {
	bin := sysBin(t)
	other := startReadyLoop(t, bin)
	evs, _ := sysRun(t, []probe.Site{sysSite(t, "syscall:openat", unix.SYS_OPENAT, 0)}, false, bin, "files")
	for _, e := range evs {
		if e.PID == other {
			t.Fatalf("event of untraced pid %d: %+v", other, e)
		}
	}
	if len(evs) == 0 {
		t.Fatal("no events of the traced process")
	}
}

// startReadyLoop runs a shell loop opening /etc/hostname until the test
// ends; its pid.
func startReadyLoop(t *testing.T, bin string) int {
	cmd := exec.Command("sh", "-c", "while :; do "+bin+" files >/dev/null; done")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd.Process.Pid
}

// TestSyscallWithProbe: an ordinary uprobe site in the same trace.
func TestSyscallWithProbe(t *testing.T) {
	bin := sysBin(t)
	spec, err := probe.Parse("marker(x)")
	if err != nil {
		t.Fatal(err)
	}
	ps := funcSite(t, bin, "marker", 0, spec)
	ps.Params = []string{"x"}
	ps.Probe = 1
	if err := ps.Bind(); err != nil {
		t.Fatal(err)
	}
	evs, _ := sysRun(t, []probe.Site{sysSite(t, "syscall:write", unix.SYS_WRITE, 0), ps}, false, bin, "files")
	var marks, writes int
	for _, e := range evs {
		switch {
		case e.Func == "marker" && e.Sys == nil && len(e.Args) == 1 && e.Args[0].Int == 41:
			marks++
		case e.Func == "write" && e.Sys != nil:
			writes++
		default:
			t.Errorf("unexpected event %+v", e)
		}
	}
	if marks != 1 || writes != 1 {
		t.Errorf("%d marker and %d write events, want 1 and 1", marks, writes)
	}
}

// BenchmarkSyscall is the cost of one traced call (close(-1), failing at
// once) with its event, the fixture's start and exit included: compare
// with -bench at a small N to take those out.
func BenchmarkSyscall(b *testing.B) {
	need.Uprobes(b)
	bin := sysBinB(b)
	sites := []probe.Site{sysSite(b, "syscall:close", unix.SYS_CLOSE, 0)}
	b.ResetTimer()
	c, _ := run(b, &Engine{}, probe.Target{Argv: []string{bin, "closes", strconv.Itoa(b.N)}}, sites)
	if c.n < b.N {
		b.Fatalf("%d events for %d calls", c.n, b.N)
	}
}

// TestSyscallEvery traces every call the table knows: both programs load
// with every kind of capture, and the fixture's calls come through.
func TestSyscallEvery(t *testing.T) {
	bin := sysBin(t)
	need.Uprobes(t)
	var sites []probe.Site
	for nr := range sysMaxNr {
		if _, ok := sysLookup(nr, 32); ok {
			s := sysSite(t, "syscall:*", nr, 0)
			s.Func = "nr" + strconv.Itoa(nr)
			sites = append(sites, s)
		}
	}
	evs, _ := sysRun(t, sites, false, bin, "files")
	if len(sysEvents(evs, "nr"+strconv.Itoa(unix.SYS_OPENAT))) < 3 || len(sysEvents(evs, "nr"+strconv.Itoa(unix.SYS_EXIT_GROUP))) != 1 {
		t.Errorf("%d events; openat and exit_group missing", len(evs))
	}
}
