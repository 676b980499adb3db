//go:build linux && amd64

package ptrace

import (
	"bufio"
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/internal/proc"
	"github.com/utap/utap/probe"
)

// TestPadHop: f, whose fourth byte g jumps to, and tiny, three bytes
// long, take pads by a hop through the padding before them; prev falls
// into f through that padding and is seen as f's call, as on breakpoints.
// The program's output and the calls are the same with pads as without.
func TestPadHop(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "pt_hop.c", "-O1")
	for _, noPads := range []bool{false, true} {
		sites := []probe.Site{siteAt(t, bin, "f", 0), siteAt(t, bin, "tiny", 0)}
		evs, out, res, st := padRun(t, noPads, probe.Target{Argv: []string{bin, "1000"}, Tally: true}, sites)
		if res.ExitCode != 0 || out != "sum=2604500\n" {
			t.Fatalf("noPads=%v: exit %d, output %q", noPads, res.ExitCode, out)
		}
		if want := map[bool]int{false: 2, true: 0}[noPads]; st.pads != want {
			t.Fatalf("noPads=%v: %d pads, want %d", noPads, st.pads, want)
		}
		hits := map[string]uint64{}
		for _, e := range evs {
			hits[e.Func]++
		}
		for _, ty := range res.Tallies {
			hits[ty.Func] += ty.Hits
		}
		if hits["f"] != 2000 || hits["tiny"] != 1000 {
			t.Fatalf("noPads=%v: calls %v; want f 2000 (1000 its own, 1000 prev's), tiny 1000", noPads, hits)
		}
	}
}

// TestPadHopDetach: attached to, the hops' jumps and the padding they
// took are as they were once detached, and the program runs on.
func TestPadHopDetach(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "pt_hop.c", "-O1")
	cmd := exec.Command(bin, "0")
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(stdout)
	lines.Scan() // running
	pid := cmd.Process.Pid
	maps0, code0 := snapshot(t, pid)
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	var st runStats
	e := &Engine{stats: &st, Verbose: func(s string) { t.Log(s) }}
	sites := []probe.Site{siteAt(t, bin, "f", 0), siteAt(t, bin, "tiny", 0)}
	done := make(chan error)
	go func() {
		_, err := e.Trace(ctx, probe.Target{PIDs: []int{pid}}, sites, func(*probe.Event) {
			if n++; n == 3000 {
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
	if n < 3000 || st.pads != 2 {
		t.Fatalf("%d events, %d pads", n, st.pads)
	}
	maps1, code1 := snapshot(t, pid)
	if maps0 != maps1 {
		t.Errorf("maps differ after detach:\n%s\n----\n%s", maps0, maps1)
	}
	if string(code0) != string(code1) {
		t.Errorf("code differs after detach")
	}
	time.Sleep(50 * time.Millisecond)
	if s, _ := proc.StatusField(pid, "State"); !strings.HasPrefix(s, "S") && !strings.HasPrefix(s, "R") {
		t.Errorf("state %q after detach", s)
	}
}
