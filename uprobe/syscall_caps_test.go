//go:build linux && amd64

package uprobe

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/internal/syscalls"
	"github.com/utap/utap/probe"
	"golang.org/x/sys/unix"
)

// capsFixtureSrc makes calls whose captures are iovec arrays and arrays
// of elements: writev, readv (the return value bounds the bytes shown),
// poll (fds at entry, revents at exit).
const capsFixtureSrc = `
#include <poll.h>
#include <sys/uio.h>
#include <unistd.h>

int main(void) {
	int p[2];
	if (pipe(p)) return 1;
	char h[] = "hello ", w[] = "world";
	struct iovec wv[2] = {{h, 6}, {w, 5}};
	writev(p[1], wv, 2);
	char a[4], b[16];
	struct iovec rv[2] = {{a, 4}, {b, 16}};
	readv(p[0], rv, 2);
	struct pollfd fds[2] = {{p[0], POLLIN, 0}, {p[1], POLLOUT, 0}};
	poll(fds, 2, 0);
	return 0;
}
`

// TestSyscallCaptureLines: the lines internal/syscalls decodes from the
// captures this engine reads are strace's.
func TestSyscallCaptureLines(t *testing.T) {
	need.Uprobes(t)
	need.Tool(t, "gcc")
	dir := t.TempDir()
	src, bin := filepath.Join(dir, "caps.c"), filepath.Join(dir, "caps")
	if err := os.WriteFile(src, []byte(capsFixtureSrc), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("gcc", "-O1", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	sites := []probe.Site{
		sysSite(t, "syscall:writev", unix.SYS_WRITEV, 0),
		sysSite(t, "syscall:readv", unix.SYS_READV, 1),
		sysSite(t, "syscall:poll", unix.SYS_POLL, 2),
	}
	evs, _ := sysRun(t, sites, false, bin)
	want := map[string]string{
		"writev": `writev(4, [{iov_base="hello ", iov_len=6}, {iov_base="world", iov_len=5}], 2) = 11`,
		"readv":  `readv(3, [{iov_base="hell", iov_len=4}, {iov_base="o world", iov_len=16}], 2) = 11`,
		"poll":   `poll([{fd=3, events=POLLIN}, {fd=4, events=POLLOUT}], 2, 0) = 1 ([{fd=4, revents=POLLOUT}])`,
	}
	for name, line := range want {
		es := sysEvents(evs, name)
		if len(es) != 1 {
			t.Errorf("%d %s events", len(es), name)
			continue
		}
		if got := syscalls.Line(es[0].Sys, &syscalls.Options{StrSize: 32}); got != line {
			t.Errorf("got  %s\nwant %s\nentry %q exit %q", got, line, es[0].Sys.Entry, es[0].Sys.Exit)
		}
	}
}

// TestSyscallTwoSpecs: overlapping plain selections trace the call once;
// a second spec with a condition of its own is refused, naming both.
func TestSyscallTwoSpecs(t *testing.T) {
	plain := []probe.Site{sysSite(t, "syscall:openat", unix.SYS_OPENAT, 0), sysSite(t, "syscall:open*", unix.SYS_OPENAT, 1)}
	if _, err := newSysSpec(plain, 32, maps{events: mapEvents, stats: mapStats}, false, stackConf{}); err != nil {
		t.Errorf("two plain specs: %v", err)
	}
	cond := []probe.Site{plain[0], sysSite(t, "syscall:open* if ret < 0", unix.SYS_OPENAT, 1)}
	_, err := newSysSpec(cond, 32, maps{events: mapEvents, stats: mapStats}, false, stackConf{})
	if err == nil || !strings.Contains(err.Error(), "syscall:openat and syscall:open* if ret < 0") {
		t.Errorf("a second spec with a condition: %v", err)
	}
}
