//go:build linux && amd64

package ptrace

import (
	"bytes"
	"context"
	"testing"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/internal/x86"
	"github.com/utap/utap/probe"
)

var lenOf = x86.Len

// run traces argv with sites and returns the events, stdout and result.
func run(t *testing.T, follow bool, sites []probe.Site, argv ...string) ([]*probe.Event, string, probe.Result) {
	t.Helper()
	var out bytes.Buffer
	var evs []*probe.Event
	res, err := (&Engine{}).Trace(context.Background(), probe.Target{Argv: argv, Stdout: &out, Follow: follow}, sites,
		func(e *probe.Event) { evs = append(evs, e) })
	if err != nil {
		t.Fatalf("Trace: %v", err)
	}
	return evs, out.String(), res
}

func TestRunCountsAndArgs(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "pt_count.c")
	sites := []probe.Site{siteAt(t, bin, "work", 0, argFetch(1), argFetch(2))}
	evs, out, res := run(t, false, sites, bin, "1", "1000")
	if res.ExitCode != 0 || out != "threads=1 iters=1000 total=499500\n" {
		t.Fatalf("exit %d, output %q", res.ExitCode, out)
	}
	if len(evs) != 1000 {
		t.Fatalf("%d events, want 1000", len(evs))
	}
	for i, e := range evs {
		if e.Args[0].Int != uint64(i) || e.Args[1].Int != 0 || e.Func != "work" || e.Kind != "entry" || e.PID == e.TID {
			t.Fatalf("event %d: %+v", i, e)
		}
	}
}

func TestRunExactCount8Threads(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "pt_count.c")
	sites := []probe.Site{siteAt(t, bin, "work", 0, argFetch(1), argFetch(2))}
	n := 0
	perTID := map[int]int{}
	var out bytes.Buffer
	// Breakpoints: every event arrives, as fast as they come (pads count
	// exactly, TestPadExactCount8Threads, but drop events a ring cannot hold).
	res, err := (&Engine{NoPads: true}).Trace(context.Background(), probe.Target{Argv: []string{bin, "8", "100000"}, Stdout: &out}, sites,
		func(e *probe.Event) { n++; perTID[e.TID]++ })
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || out.String() != "threads=8 iters=100000 total=40002400000\n" {
		t.Fatalf("exit %d, output %q", res.ExitCode, out.String())
	}
	if n != 800000 || len(perTID) != 8 {
		t.Fatalf("%d events over %d threads, want 800000 over 8", n, len(perTID))
	}
}
