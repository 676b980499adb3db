//go:build linux && amd64

package enginetest

import (
	"context"
	"testing"
	"time"

	"github.com/utap/utap/probe"
)

// attachRows are probes attached to a running et_work loop; check sees
// the events collected before detaching.
var attachRows = []struct {
	name  string
	specs []string
	check func(t *testing.T, evs []probe.Event)
}{
	{"entry args", []string{"work(a, b)"}, func(t *testing.T, evs []probe.Event) {
		for i, ev := range evs {
			if ev.Args[0].Int != ev.Args[1].Int || i > 0 && ev.Args[0].Int != evs[i-1].Args[0].Int+1 {
				t.Fatalf("events out of sequence: %q", lines(evs))
			}
		}
	}},
	{"condition", []string{"work(a) if a % 2 == 1"}, func(t *testing.T, evs []probe.Event) {
		for _, ev := range evs {
			if ev.Args[0].Int%2 != 1 {
				t.Fatalf("condition let %s through", line(ev))
			}
		}
	}},
	{"library", []string{"libc:usleep(arg1)"}, func(t *testing.T, evs []probe.Event) {
		for _, ev := range evs {
			if ev.Args[0].Int != 2000 {
				t.Fatalf("unexpected %s", line(ev))
			}
		}
	}},
}

// TestAttach attaches to a running process, collects, cancels, and
// requires the process to run on with its mappings and code as before.
func TestAttach(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.Name(), func(t *testing.T) {
			needEngine(t, eng)
			bin := etWork(t)
			for _, row := range attachRows {
				t.Run(row.name, func(t *testing.T) {
					tr := startTracee(t, "ready", bin, "loop")
					before := snapshot(t, tr.pid)
					specs, sites := resolvePID(t, tr.pid, row.specs...)
					ours := siteAddrs(t, tr.pid, sites)
					evs := attachCollect(t, eng, tr.pid, specs, sites, 5)
					row.check(t, evs)
					stopped := tr.runsOn(t)
					sameImage(t, before, snapshot(t, tr.pid), ours)
					if stopped {
						t.Fatal("the process was left stopped")
					}
				})
			}
		})
	}
}

// attachCollect attaches eng to pid with specs until n events came, then
// cancels and waits for the engine to return.
func attachCollect(t *testing.T, eng probe.Engine, pid int, specs []*probe.Spec, sites []probe.Site, n int) []probe.Event {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := &collector{}
	done := make(chan error, 1)
	go func() {
		_, err := eng.Trace(ctx, probe.Target{PIDs: []int{pid}, Resolve: resolver(specs)}, sites, c.emit)
		done <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for len(c.snapshot()) < n {
		select {
		case err := <-done:
			t.Fatalf("engine returned before %d events: %v", n, err)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("only %d events in 10s", len(c.snapshot()))
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("after cancel: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the engine did not return within 10s of cancel")
	}
	return c.snapshot()
}
