//go:build linux && amd64

package enginetest

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/utap/utap/probe"
	"github.com/utap/utap/uprobe"
)

// usdtAllSites are the fixture's probes: app:tick with its three operands
// and rip, and app:guarded (two sites, one semaphore) with its operand.
func usdtAllSites(t *testing.T, bin string) []probe.Site {
	sites := usdtSites(t, bin, "app", "tick", 0, &probe.Reg{Name: "rip"})
	return append(sites, usdtSites(t, bin, "app", "guarded", 1)...)
}

// usdtEngines are the engines, and the uprobe engine with a perf link per
// probe (UprobeOptions.RefCtrOffset rather than the multi link's
// RefCtrOffsets), named "uprobe-perf".
func usdtEngines() []probe.Engine {
	return append(engines(), perfUprobe{&uprobe.Engine{NoMulti: true}})
}

type perfUprobe struct{ *uprobe.Engine }

func (perfUprobe) Label() string { return "uprobe-perf" }

func label(eng probe.Engine) string {
	if p, ok := eng.(perfUprobe); ok {
		return p.Label()
	}
	return eng.Name()
}

// semWhileIn is the semaphore's value while eng's probes are in: the
// ptrace engine increments it once per process, the kernel once per
// uprobe, here the two sites of app:guarded.
func semWhileIn(eng probe.Engine, sites []probe.Site) uint16 {
	if eng.Name() == "ptrace" {
		return 1
	}
	n := uint16(0)
	for _, s := range sites {
		if s.Semaphore != 0 {
			n++
		}
	}
	return n
}

// traceSites runs argv under eng with sites already resolved.
func traceSites(t *testing.T, eng probe.Engine, sites []probe.Site, argv []string, follow bool) *outcome {
	t.Helper()
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := &collector{}
	res, err := eng.Trace(ctx, probe.Target{Argv: argv, Stdout: &stdout, Stderr: &stderr, Follow: follow}, sites, c.emit)
	if err != nil {
		t.Fatal(err)
	}
	return &outcome{engine: eng.Name(), events: c.snapshot(), stdout: stdout.String(), stderr: stderr.String(), res: res}
}

// usdtValues are an event's values as text, without the rip fetch (the
// load address differs between runs).
func usdtValues(ev probe.Event) string {
	var b strings.Builder
	b.WriteString(ev.Func)
	for i, v := range ev.Args {
		if ev.Func == "app:tick" && i == 3 {
			break
		}
		if v.Signed {
			fmt.Fprintf(&b, " %d", int64(v.Int))
		} else {
			fmt.Fprintf(&b, " %d", v.Int)
		}
	}
	return b.String()
}

// TestUSDTRun runs the fixture under each engine: every tick with its
// three operands at their sizes and signs and rip at the probed nop, the
// guarded branch taken at every iteration because the engine set the
// semaphore (untraced it never is), and the same events on both engines.
func TestUSDTRun(t *testing.T) {
	bin := usdtEngine(t)
	const n = 50
	argv := []string{bin, "run", fmt.Sprint(n)}
	if out, code := untraced(t, argv); code != 0 || !strings.Contains(out, "guarded=0 sem=0") {
		t.Fatalf("untraced: %q, exit %d", out, code)
	}
	mainLink := symAddr(t, bin, "main")
	got := map[string][]string{}
	for _, eng := range usdtEngines() {
		t.Run(label(eng), func(t *testing.T) {
			needEngine(t, eng)
			sites := usdtAllSites(t, bin)
			o := traceSites(t, eng, sites, argv, false)
			lines := strings.Split(strings.TrimSpace(o.stdout), "\n")
			if want := fmt.Sprintf("guarded=%d sem=%d", 2*n, semWhileIn(eng, sites)); lines[len(lines)-1] != want {
				t.Fatalf("output %q, want %q last", o.stdout, want)
			}
			bias := field(t, lines[0], "main") - mainLink
			var ticks, guarded int
			var vals []string
			for _, ev := range o.events {
				vals = append(vals, usdtValues(ev))
				switch ev.Func {
				case "app:tick":
					i := int64(ticks)
					want := []probe.Value{{Int: uint64(i), Signed: true}, {Int: uint64(-i), Signed: true},
						{Int: uint64('a' + i%26)}, {Int: bias + sites[0].Addr, Format: probe.FormatHex}}
					if !slices.Equal(ev.Args, want) {
						t.Fatalf("tick %d: %+v, want %+v", i, ev.Args, want)
					}
					ticks++
				case "app:guarded":
					if ev.Args[0].Int != uint64(guarded) {
						t.Fatalf("guarded event %d: %+v", guarded, ev.Args)
					}
					guarded++
				}
			}
			if ticks != n || guarded != 2*n {
				t.Fatalf("%d ticks and %d guarded events, want %d and %d", ticks, guarded, n, 2*n)
			}
			got[label(eng)] = vals
		})
	}
	for _, other := range []string{"uprobe", "uprobe-perf"} {
		if p, u := got["ptrace"], got[other]; p != nil && u != nil && !slices.Equal(p, u) {
			t.Fatalf("the engines disagree:\nptrace %q\n%s %q", p, other, u)
		}
	}
}

// TestUSDTAttach attaches to a running fixture: the semaphore goes from 0
// to 1 while attached, the guarded branch runs, and after detach the
// counter is back at 0 and the branch no longer taken.
func TestUSDTAttach(t *testing.T) {
	bin := usdtEngine(t)
	mainLink := symAddr(t, bin, "main")
	for _, eng := range usdtEngines() {
		t.Run(label(eng), func(t *testing.T) {
			needEngine(t, eng)
			sites := usdtAllSites(t, bin)
			tr := startUSDT(t, bin, "wait")
			bias := field(t, tr.next(t), "main") - mainLink
			if s := field(t, tr.next(t), "sem"); s != 0 {
				t.Fatalf("semaphore %d before attaching", s)
			}
			if l := tr.next(t); l != "ready" {
				t.Fatalf("%q, want ready", l)
			}
			sem := bias + sites[len(sites)-1].Semaphore
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			c := &collector{}
			done := make(chan error, 1)
			go func() {
				_, err := eng.Trace(ctx, probe.Target{PIDs: []int{tr.pid}}, sites, c.emit)
				done <- err
			}()
			deadline := time.Now().Add(10 * time.Second)
			for guardedEvents(c.snapshot()) < 5 {
				if time.Now().After(deadline) {
					t.Fatalf("%d guarded events in 10s", guardedEvents(c.snapshot()))
				}
				select {
				case err := <-done:
					t.Fatalf("engine returned: %v", err)
				case <-time.After(20 * time.Millisecond):
				}
			}
			if v, want := semAt(t, tr.pid, sem), semWhileIn(eng, sites); v != want {
				t.Errorf("semaphore %d while attached, want %d", v, want)
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if v := semAt(t, tr.pid, sem); v != 0 {
				t.Errorf("semaphore %d after detach, want 0", v)
			}
			// Guarded runs after detach would show as runs beyond those
			// reported; some may be counted between the last report and
			// the detach, none later.
			time.Sleep(50 * time.Millisecond)
			if _, err := tr.in.Write([]byte("\n")); err != nil {
				t.Fatal(err)
			}
			last := tr.next(t)
			if field(t, last, "sem") != 0 || field(t, last, "guarded") < uint64(guardedEvents(c.snapshot())) {
				t.Fatalf("after detach: %q with %d guarded events", last, guardedEvents(c.snapshot()))
			}
		})
	}
}

func guardedEvents(evs []probe.Event) int {
	n := 0
	for _, ev := range evs {
		if ev.Func == "app:guarded" {
			n++
		}
	}
	return n
}

// TestUSDTFork: a child forked while probes are in. Followed (-f), it
// keeps the parent's increment and its guarded branch runs; not followed,
// the ptrace engine takes its increment back with its breakpoints before
// it runs. The uprobe engine leaves a child that is not followed to the
// kernel, which counts the increment copied by fork until the probe goes:
// that is logged, not required.
func TestUSDTFork(t *testing.T) {
	bin := usdtEngine(t)
	const n = 20
	argv := []string{bin, "fork", fmt.Sprint(n)}
	for _, eng := range engines() {
		for _, follow := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/follow=%v", eng.Name(), follow), func(t *testing.T) {
				needEngine(t, eng)
				sites := usdtAllSites(t, bin)
				o := traceSites(t, eng, sites, argv, follow)
				out := o.stdout
				if !strings.Contains(out, fmt.Sprintf("guarded=%d sem=%d", 2*n, semWhileIn(eng, sites))) {
					t.Fatalf("parent: %q", out)
				}
				child := "child sem=0\n"
				if follow {
					child = fmt.Sprintf("child sem=%d\n", semWhileIn(eng, sites))
				}
				if !strings.Contains(out, child) {
					if eng.Name() == "uprobe" && !follow {
						t.Logf("uprobe, child not followed: %q", out)
						return
					}
					t.Fatalf("want %q in %q", child, out)
				}
				byPID := map[int]int{}
				for _, ev := range o.events {
					if ev.Func == "app:guarded" {
						byPID[ev.PID]++
					}
				}
				want := 1
				if follow {
					want = 2
				}
				if len(byPID) != want {
					t.Fatalf("guarded events from %d processes, want %d: %v", len(byPID), want, byPID)
				}
			})
		}
	}
}

// TestUSDTExec: the semaphore of an image the traced process execs is set
// when that image's probes go in.
func TestUSDTExec(t *testing.T) {
	bin := usdtEngine(t)
	argv := []string{"/bin/sh", "-c", "exec " + bin + " run 5"}
	for _, eng := range engines() {
		t.Run(eng.Name(), func(t *testing.T) {
			needEngine(t, eng)
			sites := usdtAllSites(t, bin)
			o := traceSites(t, eng, sites, argv, false)
			if want := fmt.Sprintf("guarded=10 sem=%d", semWhileIn(eng, sites)); !strings.Contains(o.stdout, want) {
				t.Fatalf("output %q, want %q", o.stdout, want)
			}
			if g := guardedEvents(o.events); g != 10 {
				t.Fatalf("%d guarded events, want 10", g)
			}
		})
	}
}
