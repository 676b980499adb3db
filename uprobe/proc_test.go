//go:build linux && amd64

package uprobe

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/probe"
	"golang.org/x/sys/unix"
)

// procFixtureSrc raises SIGUSR1 at itself (handled), forks a child that
// exits 3 (SIGCHLD, handled: an ignored signal is never delivered), and
// runs a thread that exits. It prints its pid, the child's, and the thread's tid.
const procFixtureSrc = `
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static void handler(int sig) { (void)sig; }
static pid_t ttid;
static void *thread(void *arg) { (void)arg; ttid = gettid(); return 0; }

int main(void) {
	signal(SIGUSR1, handler);
	signal(SIGCHLD, handler);
	raise(SIGUSR1);
	pid_t pid = fork();
	if (pid == 0) _exit(3);
	int st;
	while (waitpid(pid, &st, 0) < 0) {}
	pthread_t t;
	pthread_create(&t, 0, thread, 0);
	pthread_join(t, 0);
	printf("%d %d %d\n", getpid(), pid, ttid);
	return 0;
}
`

var procFixture struct {
	once sync.Once
	path string
	err  error
}

func procBin(t *testing.T) string {
	t.Helper()
	need.Tool(t, "gcc")
	procFixture.once.Do(func() {
		dir, err := os.MkdirTemp("", "utap-proc")
		if err != nil {
			procFixture.err = err
			return
		}
		src := filepath.Join(dir, "procfix.c")
		if procFixture.err = os.WriteFile(src, []byte(procFixtureSrc), 0o644); procFixture.err != nil {
			return
		}
		procFixture.path = filepath.Join(dir, "procfix")
		if out, err := exec.Command("gcc", "-O1", "-pthread", "-o", procFixture.path, src).CombinedOutput(); err != nil {
			procFixture.err = &buildErr{err, out}
		}
	})
	if procFixture.err != nil {
		t.Fatal(procFixture.err)
	}
	return procFixture.path
}

// TestSyscallProcessEvents: signals delivered and thread exits come as
// "signal" and "exit" events, in the ring with the calls.
func TestSyscallProcessEvents(t *testing.T) {
	need.Uprobes(t)
	bin := procBin(t)
	var out bytes.Buffer
	sites := []probe.Site{sysSite(t, "syscall:exit_group", unix.SYS_EXIT_GROUP, 0)}
	c, res := run(t, &Engine{}, probe.Target{Argv: []string{bin}, Stdout: &out, Follow: true, ProcessEvents: true}, sites)
	if res.Lost != 0 {
		t.Errorf("%d events lost", res.Lost)
	}
	var pid, child, tid int
	if _, err := fmt.Sscan(out.String(), &pid, &child, &tid); err != nil {
		t.Fatalf("fixture output %q: %v", out.String(), err)
	}
	le := binary.LittleEndian
	var usr1, chld bool
	exits := map[int]int{}
	var exitGroup int
	for _, e := range c.evs {
		switch e.Kind {
		case "signal":
			if len(e.Signal) != siginfoSize {
				t.Errorf("siginfo of %d bytes", len(e.Signal))
				continue
			}
			signo, code := int32(le.Uint32(e.Signal)), int32(le.Uint32(e.Signal[8:]))
			spid, status := int32(le.Uint32(e.Signal[16:])), int32(le.Uint32(e.Signal[24:]))
			t.Logf("%d/%d %s signo %d code %d pid %d status %d", e.PID, e.TID, e.Func, signo, code, spid, status)
			switch e.Func {
			case "SIGUSR1":
				usr1 = e.PID == pid && signo == int32(unix.SIGUSR1) && code == -6 && int(spid) == pid // SI_TKILL
			case "SIGCHLD":
				chld = e.PID == pid && signo == int32(unix.SIGCHLD) && code == 1 && int(spid) == child && status == 3 // CLD_EXITED
			}
		case "exit":
			t.Logf("%d/%d exit %#x", e.PID, e.TID, e.Status)
			if _, dup := exits[e.TID]; dup {
				t.Errorf("two exits of %d", e.TID)
			}
			exits[e.TID] = e.Status
			if e.Status == 0 && e.TID == pid && exitGroup == 0 {
				t.Error("the process exited before its exit_group")
			}
		default:
			if e.Func == "exit_group" && e.PID == pid {
				exitGroup++
			}
		}
	}
	if !usr1 || !chld {
		t.Errorf("SIGUSR1 seen %v, SIGCHLD with status 3 seen %v", usr1, chld)
	}
	for who, want := range map[int]int{pid: 0, tid: 0, child: 3 << 8} {
		if got, ok := exits[who]; !ok || got != want {
			t.Errorf("exit of %d: %#x (seen %v), want %#x", who, got, ok, want)
		}
	}
}
