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
	"github.com/utap/utap/probe"
)

// snapshot is what attaching must leave as it found: the maps and the
// bytes of every executable mapping of the program.
func snapshot(t *testing.T, pid int, bin string) (string, []byte) {
	t.Helper()
	maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		t.Fatal(err)
	}
	ms, _ := readMaps(pid)
	m, _ := openMemory(pid)
	defer m.close()
	var code []byte
	for _, mp := range ms {
		if mp.Path == bin && strings.Contains(mp.Perms, "x") {
			b := make([]byte, mp.End-mp.Start)
			if err := m.readByMem(b, mp.Start); err != nil {
				t.Fatal(err)
			}
			code = append(code, b...)
		}
	}
	return string(maps), code
}

func TestAttachDetachRestores(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "pt_loop.c")
	cmd := exec.Command(bin)
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(stdout)
	lines.Scan() // running
	go func() {
		for lines.Scan() {
		}
	}()
	pid := cmd.Process.Pid
	maps0, code0 := snapshot(t, pid, bin)

	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	sites := []probe.Site{siteAt(t, bin, "work", 0, argFetch(2))}
	done := make(chan error)
	go func() {
		_, err := (&Engine{}).Trace(ctx, probe.Target{PIDs: []int{pid}}, sites, func(e *probe.Event) {
			if n++; n == 5000 {
				cancel()
			}
			if e.Args[0].Int != 1 {
				t.Errorf("arg2 = %d", e.Args[0].Int)
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
	if n < 5000 {
		t.Fatalf("%d events", n)
	}
	maps1, code1 := snapshot(t, pid, bin)
	if maps0 != maps1 {
		t.Errorf("maps differ after detach:\n%s\n----\n%s", maps0, maps1)
	}
	if string(code0) != string(code1) {
		t.Errorf("code differs after detach")
	}
	if s, _ := statusField(pid, "TracerPid"); s != "0" {
		t.Errorf("TracerPid %s after detach", s)
	}
	// Still running: its state is not stopped and the code still runs.
	time.Sleep(50 * time.Millisecond)
	if st, _ := statusField(pid, "State"); !strings.HasPrefix(st, "S") && !strings.HasPrefix(st, "R") {
		t.Errorf("state %q after detach", st)
	}
}
