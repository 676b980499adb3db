//go:build linux && amd64

package enginetest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/utap/utap/elfsym"
	"github.com/utap/utap/internal/proc"
	"github.com/utap/utap/probe"
)

// tracee is a fixture started without any tracer, for attach tests.
type tracee struct {
	cmd   *exec.Cmd
	pid   int
	lines chan string // its stdout, line by line
}

// startTracee starts argv and waits for its first line, want.
func startTracee(t *testing.T, want string, argv ...string) *tracee {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tr := &tracee{cmd: cmd, pid: cmd.Process.Pid, lines: make(chan string, 1024)}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	go func() {
		s := bufio.NewScanner(out)
		for s.Scan() {
			tr.lines <- s.Text()
		}
		close(tr.lines)
	}()
	if got := tr.next(t, 5*time.Second); got != want {
		t.Fatalf("%s said %q, want %q", argv[0], got, want)
	}
	return tr
}

// next is the tracee's next output line, or fails after d.
func (tr *tracee) next(t *testing.T, d time.Duration) string {
	t.Helper()
	select {
	case l, ok := <-tr.lines:
		if !ok {
			t.Fatalf("pid %d closed its output", tr.pid)
		}
		return l
	case <-time.After(d):
		wchan, _ := os.ReadFile(fmt.Sprintf("/proc/%d/wchan", tr.pid))
		t.Fatalf("pid %d printed nothing in %v (state %s, wchan %s)", tr.pid, d, statusField(t, tr.pid, "State"), wchan)
	}
	return ""
}

// runsOn checks that the tracee is untraced and still making progress: it
// prints a new line soon. A tracee found stopped meanwhile is continued
// (so the other checks can run) and reported through the returned bool.
func (tr *tracee) runsOn(t *testing.T) (leftStopped bool) {
	t.Helper()
	if n := statusField(t, tr.pid, "TracerPid"); n != "0" {
		t.Errorf("pid %d still traced by %s", tr.pid, n)
	}
	for drained := false; !drained; {
		select {
		case <-tr.lines:
		default:
			drained = true
		}
	}
	for start := time.Now(); time.Since(start) < 5*time.Second; {
		if st := statusField(t, tr.pid, "State"); strings.HasPrefix(st, "t") || strings.HasPrefix(st, "T") {
			t.Logf("pid %d left stopped (%s): sending SIGCONT", tr.pid, st)
			tr.cmd.Process.Signal(syscall.SIGCONT)
			leftStopped = true
		}
		select {
		case _, ok := <-tr.lines:
			if !ok {
				t.Fatalf("pid %d closed its output", tr.pid)
			}
			return leftStopped
		case <-time.After(100 * time.Millisecond):
		}
	}
	tr.next(t, time.Millisecond) // fails, saying where it is stuck
	return leftStopped
}

func statusField(t *testing.T, pid int, name string) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("pid %d: %v", pid, err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && k == name {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("/proc/%d/status has no %s", pid, name)
	return ""
}

// image is a process's mappings and the bytes of its code.
type image struct {
	maps string
	code map[string][]byte // keyed by the maps line
}

// snapshot reads /proc/PID/maps and every executable mapping's bytes from
// /proc/PID/mem: what a tracer that removed everything leaves as it was.
func snapshot(t *testing.T, pid int) image {
	t.Helper()
	maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		t.Fatal(err)
	}
	mem, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	img := image{code: map[string][]byte{}}
	for _, l := range strings.Split(strings.TrimSpace(string(maps)), "\n") {
		// The kernel maps its uprobe XOL area at the first hit and keeps it
		// for the life of the process, however the probes are removed: a
		// fact of the kernel, not something a tracer could undo.
		if strings.HasSuffix(l, "[uprobes]") {
			continue
		}
		img.maps += l + "\n"
		f := strings.Fields(l)
		if len(f) < 5 || !strings.Contains(f[1], "x") || strings.HasSuffix(l, "[vsyscall]") {
			continue
		}
		lo, hi, _ := strings.Cut(f[0], "-")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("bad maps line %q", l)
		}
		b := make([]byte, end-start)
		if _, err := mem.ReadAt(b, int64(start)); err != nil && err != io.EOF {
			t.Fatalf("reading %q: %v", l, err)
		}
		img.code[l] = b
	}
	return img
}

// sameImage reports how after differs from before. Other tests on this
// machine may hold kernel uprobes on shared libraries at any time (the
// kernel puts those int3s in every process mapping the file), so a byte
// that is an int3 on one side only is tolerated, unless it is at one of
// sites, this test's own probe addresses.
func sameImage(t *testing.T, before, after image, sites []uint64) {
	t.Helper()
	if before.maps != after.maps {
		t.Errorf("/proc/PID/maps changed:\nbefore:\n%s\nafter:\n%s", before.maps, after.maps)
	}
	bad := 0
	for l, b := range before.code {
		a, ok := after.code[l]
		if !ok || bytes.Equal(a, b) {
			continue // a missing mapping is reported with the maps
		}
		start, _ := strconv.ParseUint(l[:strings.IndexByte(l, '-')], 16, 64)
		for i := range min(len(a), len(b)) {
			if a[i] == b[i] {
				continue
			}
			addr := start + uint64(i)
			if (a[i] == 0xcc || b[i] == 0xcc) && !slices.Contains(sites, addr) {
				t.Logf("int3 of someone else's uprobe at %#x (%q +%#x): %#x, was %#x", addr, l, i, a[i], b[i])
				continue
			}
			if bad++; bad <= 5 {
				t.Errorf("code at %#x (%q +%#x) is %#x, was %#x", addr, l, i, a[i], b[i])
			}
		}
	}
}

// siteAddrs are the run-time addresses of sites in process pid.
func siteAddrs(t *testing.T, pid int, sites []probe.Site) []uint64 {
	t.Helper()
	maps, err := proc.Maps(pid)
	if err != nil {
		t.Fatal(err)
	}
	var addrs []uint64
	for _, s := range sites {
		bias, err := elfsym.Bias(maps, s.Object)
		if err != nil {
			t.Fatal(err)
		}
		addrs = append(addrs, bias+s.Addr)
	}
	return addrs
}

// resolvePID resolves spec texts against a running process.
func resolvePID(t *testing.T, pid int, texts ...string) ([]*probe.Spec, []probe.Site) {
	t.Helper()
	specs, err := parseSpecs(texts)
	if err != nil {
		t.Fatal(err)
	}
	sites, err := elfsym.Resolve(specs, elfsym.Target{PID: pid})
	if err != nil {
		t.Fatal(err)
	}
	return specs, sites
}
