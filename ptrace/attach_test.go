//go:build linux && amd64

package ptrace

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/internal/proc"
	"github.com/utap/utap/probe"
)

// snapshot is what attaching must leave as it found: the maps and the
// bytes of every executable mapping of a file (the program, the loader,
// the libraries).
func snapshot(t *testing.T, pid int) (string, []byte) {
	t.Helper()
	maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		t.Fatal(err)
	}
	ms, _ := readMaps(pid)
	m, _ := proc.OpenMemory(pid)
	defer m.Close()
	var code []byte
	for _, mp := range ms {
		if strings.HasPrefix(mp.Path, "/") && strings.Contains(mp.Perms, "x") {
			b := make([]byte, mp.End-mp.Start)
			if err := m.ReadByMem(b, mp.Start); err != nil {
				t.Fatal(err)
			}
			code = append(code, b...)
		}
	}
	return string(maps), code
}

// running starts bin with args and waits for its first line: a process
// to attach to, killed at the test's end; lines reads the rest.
func running(t *testing.T, bin string, args ...string) (pid int, lines *bufio.Scanner) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines = bufio.NewScanner(stdout)
	lines.Scan() // running
	return cmd.Process.Pid, lines
}

// attachFor traces pid with e until n events came, then detaches.
func attachFor(t *testing.T, e *Engine, pid int, sites []probe.Site, n int, each func(*probe.Event)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	seen := 0
	done := make(chan error)
	go func() {
		_, err := e.Trace(ctx, probe.Target{PIDs: []int{pid}}, sites, func(ev *probe.Event) {
			if each != nil {
				each(ev)
			}
			if seen++; seen == n {
				cancel()
			}
		})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("trace did not stop")
	}
	if seen < n {
		t.Fatalf("%d events, want %d", seen, n)
	}
}

// restored checks that pid, detached, has the maps and code of the
// snapshot taken before, no tracer, and runs on.
func restored(t *testing.T, pid int, maps0 string, code0 []byte) {
	t.Helper()
	maps1, code1 := snapshot(t, pid)
	if maps0 != maps1 {
		t.Errorf("maps differ after detach:\n%s\n----\n%s", maps0, maps1)
	}
	if string(code0) != string(code1) {
		t.Errorf("code differs after detach")
	}
	if s, _ := proc.StatusField(pid, "TracerPid"); s != "0" {
		t.Errorf("TracerPid %s after detach", s)
	}
	// Still running: its state is not stopped and the code still runs.
	time.Sleep(50 * time.Millisecond)
	if st, _ := proc.StatusField(pid, "State"); !strings.HasPrefix(st, "S") && !strings.HasPrefix(st, "R") {
		t.Errorf("state %q after detach", st)
	}
}

func TestAttachDetachRestores(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "pt_loop.c")
	pid, lines := running(t, bin)
	go func() {
		for lines.Scan() {
		}
	}()
	maps0, code0 := snapshot(t, pid)
	sites := []probe.Site{siteAt(t, bin, "work", 0, argFetch(2))}
	attachFor(t, &Engine{}, pid, sites, 5000, func(e *probe.Event) {
		if e.Args[0].Int != 1 {
			t.Errorf("arg2 = %d", e.Args[0].Int)
		}
	})
	restored(t, pid, maps0, code0)
}

// TestAttachThenDlopen: a process attached to loads a library by dlopen
// and calls into it: the probes on it fire (the loader's rendezvous), and
// once detached every byte of code is back, the loader's included.
func TestAttachThenDlopen(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "et_work.c")
	lib := fixture.C(t, "et_plug.c", "-shared", "-fPIC", "-O1")
	cmd := exec.Command(bin, "dlwait", lib)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() || lines.Text() != "ready" {
		t.Fatalf("fixture said %q", lines.Text())
	}
	pid := cmd.Process.Pid
	_, code0 := snapshot(t, pid)

	ctx, cancel := context.WithCancel(context.Background())
	var got []string
	events := make(chan struct{}, 2)
	done := make(chan error, 1)
	spec := &probe.Spec{Text: lib + ":et_plug(arg1)", Object: lib, Symbol: "et_plug"}
	site := siteAt(t, lib, "et_plug", 0, argFetch(1))
	site.Spec = spec
	go func() {
		_, err := (&Engine{}).Trace(ctx, probe.Target{PIDs: []int{pid}}, []probe.Site{site}, func(e *probe.Event) {
			got = append(got, fmt.Sprintf("%s(%d)", e.Func, e.Args[0].Int))
			events <- struct{}{}
		})
		done <- err
	}()
	// The probes are in once the loader's hook carries our int3, or the
	// jmp to its trap pad.
	r, err := proc.LoaderRendezvous(pid)
	if err != nil {
		t.Fatal(err)
	}
	mem, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var b [1]byte
		if _, err := mem.ReadAt(b[:], int64(r.Brk)); err == nil && (b[0] == 0xcc || b[0] == 0xe9) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no breakpoint or pad on the loader's hook after 10 s")
		}
	}
	fmt.Fprintln(stdin, "go")
	if !lines.Scan() || lines.Text() != "done 6" {
		t.Fatalf("fixture said %q", lines.Text())
	}
	for range 2 {
		select {
		case <-events:
		case <-time.After(10 * time.Second):
			t.Fatalf("events %q", got)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[et_plug(1) et_plug(2)]" {
		t.Errorf("events %q", got)
	}
	if _, code1 := snapshot(t, pid); string(code0) != string(code1) {
		t.Errorf("code differs after detach")
	}
}
