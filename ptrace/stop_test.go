//go:build linux && amd64

package ptrace

import (
	"context"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/internal/proc"
	"github.com/utap/utap/probe"
	"golang.org/x/sys/unix"
)

// TestStopCont sends kill -STOP and -CONT to a traced command: it stops
// (group-stop, PTRACE_LISTEN) and then runs on; cancelling the context
// detaches and leaves it running.
func TestStopCont(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "pt_loop.c")
	var n, pid atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := (&Engine{}).Trace(ctx, probe.Target{Argv: []string{bin}, Stdout: io.Discard},
			[]probe.Site{siteAt(t, bin, "work", 0)}, func(e *probe.Event) { n.Add(1); pid.Store(int64(e.PID)) })
		done <- err
	}()
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !ok(); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("timeout waiting for %s", what)
			}
		}
	}
	waitFor("events", func() bool { return n.Load() > 1000 })
	p := int(pid.Load())
	unix.Kill(p, unix.SIGSTOP)
	waitFor("stop", func() bool {
		s, _ := proc.StatusField(p, "State")
		return strings.HasPrefix(s, "t") || strings.HasPrefix(s, "T")
	})
	// The calls stop: the count holds still for 200 ms (the program
	// calls work every few microseconds while it runs). A call made
	// just before the stop may still come after the state says stopped:
	// a thread in a pad finishes its record before it takes the signal.
	c1 := n.Load()
	still := time.Now()
	waitFor("events to stop", func() bool {
		if c := n.Load(); c != c1 {
			c1, still = c, time.Now()
		}
		return time.Since(still) > 200*time.Millisecond
	})
	unix.Kill(p, unix.SIGCONT)
	waitFor("events after SIGCONT", func() bool { return n.Load() > c1+1000 })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	defer func() { unix.Kill(p, unix.SIGKILL); unix.Wait4(p, nil, 0, nil) }()
	if s, _ := proc.StatusField(p, "TracerPid"); s != "0" {
		t.Fatalf("TracerPid %s after cancel", s)
	}
	time.Sleep(20 * time.Millisecond)
	if s, _ := proc.StatusField(p, "State"); !strings.HasPrefix(s, "S") && !strings.HasPrefix(s, "R") {
		t.Fatalf("state %q after detach", s)
	}
}
