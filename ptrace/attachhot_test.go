//go:build linux && amd64

package ptrace

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/probe"
)

// Attach and detach again and again while four threads run through the
// pad as fast as they can: each detach finds threads inside it and steps
// them out before the area goes; the process runs on, its maps and code as
// before. Nothing here depends on how fast the machine is: each cycle ends
// at its first event, and a cycle's placement is checked for what it is (a
// pad, or a breakpoint because a thread was about to resume inside the
// jump's bytes, which a busy machine makes more likely), never counted.
func TestPadAttachDetachHot(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "pt_count.c")
	pid, maps0, code0 := hotProcess(t, bin)
	sites := []probe.Site{siteAt(t, bin, "work", 0, argFetch(1), argFetch(2))}
	for i := range 10 {
		var (
			mu    sync.Mutex
			lines []string
		)
		verbose := func(line string) { mu.Lock(); lines = append(lines, line); mu.Unlock() }
		// The first event ends the cycle; the deadline only stops a hang.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		var st runStats
		n := 0
		e := &Engine{stats: &st, Verbose: verbose}
		res, err := e.Trace(ctx, probe.Target{PIDs: []int{pid}}, sites, func(*probe.Event) { n++; cancel() })
		timedOut := ctx.Err() == context.DeadlineExceeded
		cancel()
		if err != nil {
			t.Fatalf("cycle %d: %v", i, err)
		}
		if n == 0 || timedOut {
			t.Fatalf("cycle %d: %d pads, %d events in a minute", i, st.pads, n)
		}
		mu.Lock()
		placed := strings.Join(lines, "\n")
		mu.Unlock()
		switch {
		case st.pads == 1 && strings.Contains(placed, "in-process pad"):
		case st.pads == 0 && strings.Contains(placed, "inside the bytes the jump would take"):
			// A thread stopped on work's ret, inside the jump's bytes,
			// keeps that cycle's probe a breakpoint.
		default:
			t.Fatalf("cycle %d: %d pads, placement:\n%s", i, st.pads, placed)
		}
		runsOn(t, i, pid, maps0, code0)
		t.Logf("cycle %d: %d pads, %d events, %d lost", i, st.pads, n, res.Lost)
	}
}

// hotProcess starts bin (pt_count) with four threads calling work as
// fast as they can, killed at the test's end, and returns its pid, maps
// and code once the threads run.
func hotProcess(t *testing.T, bin string) (pid int, maps string, code []byte) {
	t.Helper()
	cmd := exec.Command(bin, "4", "4000000000")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// It would spin on if the test died (a timeout runs no defer): a
	// minute of CPU at most. (Not Pdeathsig: it fires when the thread
	// that forked exits, and the engine's locked threads do.)
	unix.Prlimit(cmd.Process.Pid, unix.RLIMIT_CPU, &unix.Rlimit{Cur: 60, Max: 60}, nil)
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	waitThreads(t, cmd.Process.Pid, 5) // the main thread and its four
	maps, code = snapshot(t, cmd.Process.Pid)
	return cmd.Process.Pid, maps, code
}

// runsOn checks process pid after detach cycle i as restored does, and
// stops the test at the first cycle that left it otherwise.
func runsOn(t *testing.T, i, pid int, maps0 string, code0 []byte) {
	t.Helper()
	if restored(t, pid, maps0, code0); t.Failed() {
		t.Fatalf("cycle %d: the process is not as it was after detach", i)
	}
}

// waitThreads waits until process pid has n threads (their stacks mapped).
func waitThreads(t *testing.T, pid, n int) {
	t.Helper()
	for {
		ents, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
		if err != nil {
			t.Fatal(err)
		}
		if len(ents) >= n {
			return
		}
		time.Sleep(time.Millisecond)
	}
}
