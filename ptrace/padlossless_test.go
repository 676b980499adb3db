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

// 8 threads x 100k calls, an event each: a full ring makes the calling
// thread wait for the tracer, so every call is an event and none is
// lost, whatever the tracer's pace (it used to deliver 150,144).
func TestPadLossless8Threads(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "pt_count.c")
	sites := []probe.Site{siteAt(t, bin, "work", 0, argFetch(1), argFetch(2))}
	evs, out, res, st := padRun(t, false, probe.Target{Argv: []string{bin, "8", "100000"}}, sites)
	if res.ExitCode != 0 || out != "threads=8 iters=100000 total=40002400000\n" {
		t.Fatalf("exit %d, output %q", res.ExitCode, out)
	}
	perThread := map[int]int{}
	for _, e := range evs {
		perThread[int(e.Args[1].Int)]++
	}
	if st.pads != 1 || len(evs) != 800000 || res.Lost != 0 || len(perThread) != 8 {
		t.Fatalf("pads %d, %d events, lost %d, threads %v; want 800000, 0", st.pads, len(evs), res.Lost, perThread)
	}
	t.Logf("%d waits for room", st.padWaits)
}

// smallRing makes the rings of the test's traces n records: they fill.
func smallRing(t *testing.T, n int) {
	old := ringRecords
	ringRecords = n
	t.Cleanup(func() { ringRecords = old })
}

// A signal storm (a 50 µs SIGALRM with a handler) while threads wait
// for room in a 16-record ring: a signal that interrupts the wait is
// delivered once the thread is out of its pad, the wait goes on, and
// every call is an event, none lost.
func TestPadWaitSignalStorm(t *testing.T) {
	need.Root(t)
	smallRing(t, 16)
	bin := fixture.C(t, "pt_storm.c", "-O1")
	sites := []probe.Site{siteAt(t, bin, "work", 0), siteAt(t, bin, "step", 0)}
	sites[1].Probe = 1
	const calls = 20000
	argv := []string{bin, "50", fmt.Sprint(calls)}
	want, err := exec.Command(argv[0], argv[1:]...).Output()
	if err != nil {
		t.Fatal(err)
	}
	var errOut bytes.Buffer
	evs, out, res, st := padRun(t, false, probe.Target{Argv: argv, Stderr: &errOut}, sites)
	n := [2]int{}
	for _, e := range evs {
		n[e.ProbeIndex]++
	}
	if res.ExitCode != 0 || out != string(want) || n[0] != calls || n[1] != calls || res.Lost != 0 || st.pads != 2 {
		t.Fatalf("exit %d, output %q (untraced %q); %d and %d calls seen, lost %d, pads %d; want %d each",
			res.ExitCode, out, want, n[0], n[1], res.Lost, st.pads, calls)
	}
	t.Logf("%s: %d waits for room, %d escapes", bytes.TrimSpace(errOut.Bytes()), st.padWaits, st.padEscapes)
}
