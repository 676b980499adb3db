//go:build linux && amd64

package enginetest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/probe"
	"github.com/utap/utap/ptrace"
	"github.com/utap/utap/uprobe"
)

// TestAttachDetachChurn attaches, counts for 10 ms and detaches, again and
// again, on a process whose threads start and end all the time. Every
// cycle must succeed and leave the process running. The ptrace engine used
// to run its injected mmap in a thread stopped at its clone event, whose
// clone then returned ENOSYS: pthread_create made a second thread on the
// first one's stack (SIGSEGV, or the main thread exiting as a child); it
// also lost interrupts (detach hung) and refused exiting threads.
func TestAttachDetachChurn(t *testing.T) {
	bin := etWork(t)
	for _, eng := range engines() {
		t.Run(eng.Name(), func(t *testing.T) {
			needEngine(t, eng)
			tr := startTracee(t, "ready", bin, "churn")
			_, sites := resolvePID(t, tr.pid, "work")
			for i := range 40 {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
				_, err := eng.Trace(ctx, probe.Target{PIDs: []int{tr.pid}, Tally: true}, sites, func(*probe.Event) {})
				cancel()
				if err != nil {
					t.Fatalf("cycle %d: %v", i, err)
				}
				st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", tr.pid))
				// The state follows the command name, in parentheses.
				if _, after, _ := strings.Cut(string(st), ") "); !strings.HasPrefix(after, "S") && !strings.HasPrefix(after, "R") {
					t.Fatalf("cycle %d: the process is in state %.1s", i, after)
				}
			}
		})
	}
}

// TestOverwrittenBreakpoint: another tracer's uprobe placed and removed at
// a ptrace breakpoint's address takes the int3 out with it (the kernel puts
// back the byte it saw). The ptrace engine cannot see those calls any more:
// it must say so.
func TestOverwrittenBreakpoint(t *testing.T) {
	need.Root(t)
	need.Uprobes(t)
	bin := etWork(t)
	tr := startTracee(t, "ready", bin, "loop")
	_, sites := resolvePID(t, tr.pid, "work")
	ctx, cancel := context.WithCancel(context.Background())
	type result struct {
		res probe.Result
		err error
	}
	done := make(chan result, 1)
	var n atomic.Int64
	go func() {
		// Breakpoints: a kernel uprobe on a pad's jump would run the file's
		// first instruction, then return into the jump (README: pads and
		// other tracers' uprobes at the same address do not mix).
		res, err := (&ptrace.Engine{NoPads: true}).Trace(ctx, probe.Target{PIDs: []int{tr.pid}}, sites, func(*probe.Event) { n.Add(1) })
		done <- result{res, err}
	}()
	for start := time.Now(); n.Load() < 10; time.Sleep(10 * time.Millisecond) {
		if time.Since(start) > 10*time.Second {
			cancel()
			t.Fatal("no ptrace events")
		}
	}
	uctx, ucancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	if _, err := (&uprobe.Engine{}).Trace(uctx, probe.Target{PIDs: []int{tr.pid}}, sites, func(*probe.Event) {}); err != nil {
		t.Logf("the uprobe engine on top of ptrace's int3: %v", err)
	}
	ucancel()
	cancel()
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if !strings.Contains(strings.Join(r.res.Notices, "\n"), "taken out by someone else") {
		t.Errorf("notices %q: the lost breakpoint is not reported", r.res.Notices)
	}
	t.Log(r.res.Notices)
}
