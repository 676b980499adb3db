//go:build linux && amd64

package compare

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/utap/utap/internal/need"
)

func TestAttachCounts(t *testing.T) {
	for _, c := range []struct {
		us   float64
		want [2]int
	}{
		{100, [2]int{1, 1000}},    // 0.1 s for 1,000 probes: all of them
		{-50, [2]int{1, 1000}},    // a noisy estimate
		{100000, [2]int{1, 150}},  // bpftrace: 15 s / 100 ms
		{1e7, [2]int{1, 20}},      // never fewer than the calibration's
		{15000.1, [2]int{1, 990}}, // rounded down to two digits
	} {
		if got := attachCounts(c.us, 1000, 15*time.Second); got != c.want {
			t.Errorf("attachCounts(%v) = %v; want %v", c.us, got, c.want)
		}
	}
}

// TestWaiter checks the attach rows' witness: it notices a process left
// stopped, and runs every probed function once when told to finish.
func TestWaiter(t *testing.T) {
	w := cWorkload(t)
	wt, err := startWaiter(w)
	if err != nil {
		t.Fatal(err)
	}
	defer wt.kill()
	time.Sleep(50 * time.Millisecond)
	if err := wt.check(); err != nil {
		t.Fatalf("fresh waiter: %v", err)
	}
	syscall.Kill(wt.pid(), syscall.SIGSTOP)
	time.Sleep(50 * time.Millisecond)
	if err := wt.check(); err == nil || !strings.Contains(err.Error(), "state T") {
		t.Errorf("stopped waiter: check = %v", err)
	}
	syscall.Kill(wt.pid(), syscall.SIGCONT)
	if err := wt.finish(5 * time.Second); err != nil {
		t.Errorf("finish: %v", err)
	}

	dead, err := startWaiter(w)
	if err != nil {
		t.Fatal(err)
	}
	syscall.Kill(dead.pid(), syscall.SIGSEGV)
	if err := dead.finish(5 * time.Second); err == nil || !strings.Contains(err.Error(), "misbehaved") {
		t.Errorf("killed waiter: finish = %v", err)
	}
}

// utapBinary builds the utap command for the rows that run it.
func utapBinary(t *testing.T) string {
	t.Helper()
	exe := filepath.Join(t.TempDir(), "utap")
	if out, err := exec.Command("go", "build", "-o", exe, "github.com/utap/utap/cmd/utap").CombinedOutput(); err != nil {
		t.Fatalf("building utap: %v\n%s", err, out)
	}
	return exe
}

// TestRunAttach times attaching 1,000 probes to a waiting process and
// detaching them with both engines: each row is measured from 1 and
// 1,000 probes, and the process runs on unharmed afterwards.
func TestRunAttach(t *testing.T) {
	need.Root(t)
	need.Uprobes(t)
	w := cWorkload(t)
	exe := utapBinary(t)
	dir := t.TempDir()
	sc, _ := SelectScenarios([]string{"attach"})
	rep, err := Run(context.Background(), Config{
		Workload: w, Scenarios: sc, Events: 1000, Repeat: 1, Budget: 500 * time.Millisecond, Dir: dir,
		Tools: []Tool{Utap{Exe: exe, Backend: "ptrace", Dir: dir}, Utap{Exe: exe, Backend: "uprobe", Dir: dir}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 2 {
		t.Fatalf("rows: %+v", rep.Rows)
	}
	for _, r := range rep.Rows {
		t.Logf("%s: %.1f ms per 1,000 probes, fixed %.1f ms, %s%s", r.Tool, r.PerEvent.Median, r.Startup, r.Flag, r.Skip)
		if r.Skip != "" || r.Flag != "" {
			t.Errorf("%s: %s%s", r.Tool, r.Skip, r.Flag)
			continue
		}
		if r.Mode != ModeAttach || r.Calls != [2]int{1, 1000} || r.Expected != 0 || r.Seen != 0 || r.Baseline {
			t.Errorf("%s: row %+v", r.Tool, r)
		}
		if !strings.Contains(r.Command, "utap attach --backend") || !strings.Contains(r.Command, "-p PID --probes DIR/probes-1000.txt") {
			t.Errorf("%s: command %s", r.Tool, r.Command)
		}
	}
}

// TestRunUserCommand runs the user-command mode end to end with the
// peers found on PATH: with {N} the rows are slopes per event, without
// they are whole-run costs.
func TestRunUserCommand(t *testing.T) {
	need.Root(t)
	cw := cWorkload(t)
	peers, _ := SelectPeers("auto")
	for _, argv := range [][]string{{cw.Exe, "{N}", "1", "call"}, {cw.Exe, "600", "1", "call"}} {
		w, err := UserWorkload(argv)
		if err != nil {
			t.Fatal(err)
		}
		expect := Expect{PerN: 1}
		if w.Single {
			expect = Expect{Const: 600}
		}
		sc, err := UserScenario([]string{"utap_workload_target(arg1)"}, expect, w)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Run(context.Background(), Config{
			Workload: w, Tools: peers, Scenarios: []Scenario{sc},
			Events: 1000, Repeat: 2, Calls: [2]int{200, 600}, Dir: t.TempDir(),
		})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Unit != "event" {
			t.Errorf("unit %q", rep.Unit)
		}
		for _, r := range rep.Rows {
			t.Logf("single=%v %s: %s %.1f µs %s%s", w.Single, r.Tool, r.Mode, r.PerEvent.Median, r.Flag, r.Skip)
			if r.Skip != "" || r.Flag != "" {
				t.Errorf("%s: %s%s", r.Tool, r.Skip, r.Flag)
			}
			if r.Expected != 600 || len(r.Values) != 2 {
				t.Errorf("%s: expected %d, values %v", r.Tool, r.Expected, r.Values)
			}
			if w.Single != (r.Mode == ModeTotal) || !w.Single && r.Calls != [2]int{200, 600} {
				t.Errorf("%s: mode %q, calls %v", r.Tool, r.Mode, r.Calls)
			}
		}
	}
}
