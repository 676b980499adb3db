//go:build linux && amd64

package ptrace

import (
	"bytes"
	"fmt"
	"os/exec"
	"testing"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/probe"
)

// TestPadSignalStorm: a 10 µs SIGALRM with a handler while two padded
// functions (one whose pad returns by its displaced ret, one that falls
// through) are called. A signal landing in a pad used to be delivered
// there, and a thread under the storm crossed the pad's hundred
// instructions one per third delivery: 7,230 of 20,000 calls in 100 s. Now
// the program finishes with its output and every call; structurally, a
// signal is escaped from a pad at most once, in a bounded number of
// stops (a hardware breakpoint and the displaced instructions stepped),
// and none without pads.
func TestPadSignalStorm(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "pt_storm.c", "-O1")
	sites := []probe.Site{siteAt(t, bin, "work", 0), siteAt(t, bin, "step", 0)}
	sites[1].Probe = 1
	const calls = 2000
	argv := []string{bin, "10", fmt.Sprint(calls)}
	want, err := exec.Command(argv[0], argv[1:]...).Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, noPads := range []bool{false, true} {
		var errOut bytes.Buffer
		evs, out, res, st := padRun(t, noPads, probe.Target{Argv: argv, Stderr: &errOut}, sites)
		var alarms int64
		fmt.Sscanf(errOut.String(), "%d alarms", &alarms)
		n := [2]int{}
		for _, e := range evs {
			n[e.ProbeIndex]++
		}
		switch {
		case res.ExitCode != 0 || out != string(want):
			t.Fatalf("no-pads %v: exit %d, output %q; untraced %q", noPads, res.ExitCode, out, want)
		case n[0] != calls || n[1] != calls || res.Lost != 0:
			t.Fatalf("no-pads %v: %d and %d calls seen (lost %d), want %d each", noPads, n[0], n[1], res.Lost, calls)
		case noPads && (st.pads != 0 || st.padEscapes != 0):
			t.Fatalf("no-pads: %d pads, %d escapes", st.pads, st.padEscapes)
		case !noPads && st.pads != 2:
			t.Fatalf("%d pads, want 2", st.pads)
		case st.padEscapes > alarms:
			t.Fatalf("%d escapes from a pad for %d signals", st.padEscapes, alarms)
		case st.padRuns > 0 && st.padSteps > 4*st.padEscapes:
			// Stepping is for the displaced instructions only.
			t.Fatalf("%d steps for %d escapes", st.padSteps, st.padEscapes)
		}
		t.Logf("no-pads %v: %d alarms, %d stops, %d escapes (%d runs, %d steps)", noPads, alarms, st.stops, st.padEscapes, st.padRuns, st.padSteps)
	}
}

// TestPadThreadReuse: threads started one after the other get the fs base
// of the one before, the identity a pad's record carries. A thread's first
// stop no longer drains the ring to tell them apart (it took the loop tens
// of milliseconds under load, for each thread): every record still goes
// to the thread that wrote it, pads on and off.
func TestPadThreadReuse(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "pt_reuse.c")
	sites := []probe.Site{siteAt(t, bin, "work", 0, argFetch(2))}
	const threads, calls = 40, 2000
	for _, noPads := range []bool{false, true} {
		evs, out, res, st := padRun(t, noPads, probe.Target{Argv: []string{bin, fmt.Sprint(threads), fmt.Sprint(calls)}}, sites)
		if res.ExitCode != 0 || res.Lost != 0 || len(evs) != threads*calls || (!noPads && st.pads != 1) {
			t.Fatalf("no-pads %v: exit %d %q, %d events (lost %d), pads %d; want %d", noPads, res.ExitCode, out, len(evs), res.Lost, st.pads, threads*calls)
		}
		tidOf := map[uint64]int{}
		byTid := map[int]uint64{}
		for _, e := range evs {
			k := e.Args[0].Int
			if tid, ok := tidOf[k]; ok && tid != e.TID {
				t.Fatalf("no-pads %v: thread %d's calls under tids %d and %d", noPads, k, tid, e.TID)
			}
			if k2, ok := byTid[e.TID]; ok && k2 != k {
				t.Fatalf("no-pads %v: tid %d has calls of threads %d and %d", noPads, e.TID, k2, k)
			}
			tidOf[k], byTid[e.TID] = e.TID, k
		}
		if len(tidOf) != threads {
			t.Fatalf("no-pads %v: %d threads seen, want %d", noPads, len(tidOf), threads)
		}
	}
}
