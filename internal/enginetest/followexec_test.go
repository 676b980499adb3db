//go:build linux && amd64

package enginetest

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/probe"
)

func etExecer(t *testing.T) string { return fixture.C(t, "et_execer.c") }
func etExecee(t *testing.T) string { return fixture.C(t, "et_execee.c") }

// execeeCount is et_execee's arguments for 1,000 calls of its work(2, i).
func execeeCount(t *testing.T) []string { return []string{etExecee(t), "count", "1000"} }

// followExecs are the rows of TestFollowExec: with -f, a followed process
// that execs is traced in its new image, every call counted. Each image's
// calls have their own first argument: et_execer's work(1, i) before the
// exec, et_execee's work(2, i) or et_execer's own work(3, i) after.
func followExecs() []behaviour {
	row := func(name string, args func(t *testing.T) []string, want map[uint64]int, leader bool) behaviour {
		return behaviour{name: name, fixture: etExecer, argsOf: args, specs: []string{"work(a, b)"}, follow: true,
			check: wantImages(want, leader)}
	}
	return []behaviour{
		row("child execs another program", func(t *testing.T) []string {
			return append([]string{"child"}, execeeCount(t)...)
		}, map[uint64]int{1: 100, 2: 1000}, false),
		row("child execs its own program", func(t *testing.T) []string {
			return []string{"child", etExecer(t), "count", "1000"}
		}, map[uint64]int{1: 100, 3: 1000}, false),
		row("command execs another program", func(t *testing.T) []string {
			return append([]string{"direct"}, execeeCount(t)...)
		}, map[uint64]int{1: 100, 2: 1000}, false),
		row("posix_spawn", func(t *testing.T) []string {
			return append([]string{"spawn"}, execeeCount(t)...)
		}, map[uint64]int{2: 1000}, false),
		// The exec'ing thread becomes the leader: its tid is the pid.
		row("command's second thread execs", func(t *testing.T) []string {
			return append([]string{"thread"}, execeeCount(t)...)
		}, map[uint64]int{2: 1000}, true),
		row("child's second thread execs", func(t *testing.T) []string {
			return append([]string{"childthread"}, execeeCount(t)...)
		}, map[uint64]int{2: 1000}, true),
	}
}

// TestFollowExec runs the exec rows on every engine.
func TestFollowExec(t *testing.T) {
	for _, b := range followExecs() {
		t.Run(b.name, func(t *testing.T) {
			for _, eng := range engines() {
				t.Run(eng.Name(), func(t *testing.T) {
					needEngine(t, eng)
					runBehaviour(t, eng, b)
				})
			}
		})
	}
}

// TestFollowExecAttached attaches with -f to a running process that then
// execs another program: its 100 calls before the exec and the new
// image's 1,000 are all seen.
func TestFollowExecAttached(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.Name(), func(t *testing.T) { execAttached(t, eng, true) })
	}
}

// execAttached attaches to a running process (with -f if follow) that
// then execs another program, and checks that every call of both images
// is seen.
func execAttached(t *testing.T, eng probe.Engine, follow bool) {
	needEngine(t, eng)
	tr := startTracee(t, "ready", append([]string{etExecer(t), "wait"}, execeeCount(t)...)...)
	specs, sites := resolvePID(t, tr.pid, "work(a, b)")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := &collector{}
	done := make(chan error, 1)
	go func() {
		res, err := eng.Trace(ctx, probe.Target{PIDs: []int{tr.pid}, Follow: follow, Resolve: resolver(specs)}, sites, c.emit)
		for _, n := range res.Notices {
			t.Logf("notice: %s", n)
		}
		done <- err
	}()
	// Its work(0, 0) every millisecond says the probes are in.
	for len(c.snapshot()) == 0 {
		select {
		case err := <-done:
			t.Fatalf("engine returned before any event: %v", err)
		case <-time.After(5 * time.Millisecond):
		}
	}
	if err := syscall.Kill(tr.pid, syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	// Its last line comes after its last call. The trace is ended
	// then: this test is the process's parent, and its reaping would
	// race with the ptrace engine's wait for the exit.
	if got := tr.next(t, 10*time.Second); got != "execee 1000" {
		t.Fatalf("the new image said %q", got)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the engine did not return within 10s of cancel")
	}
	var evs []probe.Event
	for _, ev := range c.snapshot() {
		if ev.Args[0].Int != 0 {
			evs = append(evs, ev)
		}
	}
	wantImages(map[uint64]int{1: 100, 2: 1000}, false)(t, &outcome{events: evs})
}

// wantImages checks the count of events per first argument (per image),
// all in one process, as exec keeps the pid; with leader, on its main
// thread.
func wantImages(want map[uint64]int, leader bool) func(*testing.T, *outcome) {
	return func(t *testing.T, o *outcome) {
		t.Helper()
		got := map[uint64]int{}
		for _, ev := range o.events {
			if len(ev.Args) != 2 {
				t.Fatalf("unexpected event %s", line(ev))
			}
			got[ev.Args[0].Int]++
			if ev.PID != o.events[0].PID {
				t.Errorf("%s on pid %d, want %d: exec keeps the pid", line(ev), ev.PID, o.events[0].PID)
				break
			}
			if leader && ev.TID != ev.PID {
				t.Errorf("%s on thread %d of %d: the exec'ing thread is the leader", line(ev), ev.TID, ev.PID)
				break
			}
		}
		for a, n := range want {
			if got[a] != n {
				t.Errorf("%d events of work(%d, _), want %d (all: %v, %d events)", got[a], a, n, got, len(o.events))
			}
		}
		if len(got) != len(want) {
			t.Errorf("events per first argument %v, want %v", got, want)
		}
		for _, n := range o.res.Notices {
			t.Logf("notice: %s", n)
		}
	}
}
