//go:build linux && amd64

package uprobe

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/utap/utap/elfsym"
	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/probe"
)

// resolve parses specs and resolves them in bin as the CLI does.
func resolve(t *testing.T, bin string, texts ...string) []probe.Site {
	t.Helper()
	var specs []*probe.Spec
	for _, text := range texts {
		s, err := probe.Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		specs = append(specs, s)
	}
	sites, err := elfsym.Resolve(specs, elfsym.Target{Exe: bin})
	if err != nil {
		t.Fatal(err)
	}
	for i := range sites {
		if err := sites[i].Bind(); err != nil {
			t.Fatal(err)
		}
	}
	return sites
}

// traceLog runs e and returns the events and what the engine reported.
func traceLog(t *testing.T, e *Engine, argv []string, sites []probe.Site) (*collector, string) {
	t.Helper()
	c, res := run(t, e, probe.Target{Argv: argv}, sites)
	if res.ExitCode != 0 || res.Lost != 0 {
		t.Fatalf("%v: exit %d, %d lost", argv, res.ExitCode, res.Lost)
	}
	return c, strings.Join(res.Notices, "\n")
}

// TestReturnRecursion: 10,000 nested calls. RET probes see every return,
// and a recursive function gets them without asking.
func TestReturnRecursion(t *testing.T) {
	need.Uprobes(t)
	bin := fixture.C(t, "up_ret.c", "-O2")
	sites := resolve(t, bin, "return:rec(ret)", "rec(arg1)")
	const depth = 10000
	c, log := traceLog(t, &Engine{RetProbes: true}, []string{bin, "rec", "10000"}, sites)
	if c.n != 2*(depth+1) || log != "" {
		t.Fatalf("RET probes: %d events, want %d; log %q", c.n, 2*(depth+1), log)
	}
	// Entries go down n = depth..0, then returns come back up ret = 0..depth.
	for i, ev := range c.evs[:min(len(c.evs), 10000)] {
		if i <= depth {
			if ev.Kind != "entry" || int(ev.Args[0].Int) != depth-i {
				t.Fatalf("event %d: %+v, want the entry of rec(%d)", i, ev, depth-i)
			}
			continue
		}
		r := i - depth - 1
		if ev.Kind != "return" || ev.Ret == nil || int(ev.Ret.Int) != r || int(ev.Args[0].Int) != r || ev.DurationNs <= 0 {
			t.Fatalf("event %d: %+v, want rec's return %d with a duration", i, ev, r)
		}
	}

	// A function that calls itself gets RET probes by default: kernel
	// uretprobes would see only the outermost 64 returns.
	c, log = traceLog(t, &Engine{}, []string{bin, "rec", "10000"}, sites[:1])
	if c.n != depth+1 || log != "" {
		t.Fatalf("default: %d returns, log %q; want all %d", c.n, log, depth+1)
	}
	for i, ev := range c.evs[:min(len(c.evs), 10000)] {
		if int(ev.Ret.Int) != i || ev.DurationNs <= 0 {
			t.Fatalf("return %d: %+v", i, ev)
		}
	}
}

func TestReturnMutualRecursion(t *testing.T) {
	need.Uprobes(t)
	bin := fixture.C(t, "up_ret.c", "-O2")
	sites := resolve(t, bin, "return:ping(ret)", "return:pong(ret)")
	for _, e := range []*Engine{{RetProbes: true}, {}} {
		c, log := traceLog(t, e, []string{bin, "mutual", "60"}, sites)
		if c.n != 60 || log != "" {
			t.Fatalf("RetProbes=%v: %d returns, log %q; want 60", e.RetProbes, c.n, log)
		}
		for i, ev := range c.evs {
			want := "pong"
			if i%2 == 1 { // ping(60) calls pong(59) ... ping(2) calls pong(1)
				want = "ping"
			}
			if ev.Func != want || int(ev.Ret.Int) != i+1 || ev.DurationNs <= 0 {
				t.Fatalf("RetProbes=%v: return %d: %+v, want %s returning %d", e.RetProbes, i, ev, want, i+1)
			}
		}
	}
}

func TestReturnThreads(t *testing.T) {
	need.Uprobes(t)
	bin := fixture.C(t, "up_ret.c", "-O2")
	sites := resolve(t, bin, "return:leaf(ret) if ret % 2 == 0")
	for _, e := range []*Engine{{RetProbes: true}, {}} {
		c, log := traceLog(t, e, []string{bin, "threads", "4", "2000"}, sites)
		if c.n != 4*1000 || log != "" {
			t.Fatalf("RetProbes=%v: %d returns, log %q; want 4000", e.RetProbes, c.n, log)
		}
		next := map[int]uint64{}
		for _, ev := range c.evs[:4000] {
			if ev.Ret.Int != next[ev.TID] || ev.DurationNs <= 0 || ev.Kind != "return" {
				t.Fatalf("RetProbes=%v: %+v, want ret %d on thread %d", e.RetProbes, ev, next[ev.TID], ev.TID)
			}
			next[ev.TID] += 6
		}
	}
}

// TestReturnDuration: nap(50) sleeps 50 ms.
func TestReturnDuration(t *testing.T) {
	need.Uprobes(t)
	bin := fixture.C(t, "up_ret.c", "-O2")
	sites := resolve(t, bin, "return:nap(ret)")
	for _, e := range []*Engine{{RetProbes: true}, {}} {
		var out bytes.Buffer
		c, res := run(t, e, probe.Target{Argv: []string{bin, "nap", "50"}, Stdout: &out}, sites)
		var took int64
		if _, err := fmt.Sscanf(out.String(), "took %d\n", &took); err != nil || res.ExitCode != 0 || c.n != 1 {
			t.Fatalf("exit %d, output %q, %d events: %v", res.ExitCode, out.String(), c.n, err)
		}
		// At least the sleep, at most what the caller timed around the
		// call (however loaded the machine, which only stretches both).
		d := c.evs[0].DurationNs
		if d < 50e6 || d > took {
			t.Errorf("RetProbes=%v: nap(50) took %d ns by the probe, %d by the caller", e.RetProbes, d, took)
		}
		t.Logf("RetProbes=%v: nap(50): %.3f ms", e.RetProbes, float64(d)/1e6)
	}
}

// TestReturnGo probes a Go function whose big frames make goroutine
// stacks grow while calls are open, on 8 goroutines with GC: every return
// pairs with its entry, and the program is unharmed.
func TestReturnGo(t *testing.T) {
	need.Uprobes(t)
	bin := fixture.Go(t, "pt_retgo") // shared with the ptrace engine's test
	sites := resolve(t, bin, "main.deep(arg1)", "return:main.deep(ret)")
	if !sites[1].GoFunc {
		t.Fatal("main.deep is not seen as a Go function")
	}
	var out bytes.Buffer
	const g, r, d = 8, 3, 1000
	c, res := run(t, &Engine{}, probe.Target{Argv: []string{bin, fmt.Sprint(g), fmt.Sprint(r), fmt.Sprint(d)}, Stdout: &out}, sites)
	const calls = g * r * (d + 1)
	want := fmt.Sprintf("calls=%d sum=%d\n", calls, g*r*(d/2+1))
	if res.ExitCode != 0 || out.String() != want || c.n != 2*calls || len(res.Notices) != 0 || res.Lost != 0 {
		t.Fatalf("exit %d, output %q, %d events (want %d), notices %q", res.ExitCode, out.String(), c.n, 2*calls, res.Notices)
	}
	var entries, returns int
	for _, ev := range c.evs {
		if ev.Kind == "entry" {
			entries++
			continue
		}
		returns++
		if ev.DurationNs <= 0 {
			t.Fatalf("return without duration: %+v", ev)
		}
	}
	t.Logf("first %d events: %d entries, %d returns", len(c.evs), entries, returns)
}

// TestReturnAttachWindow attaches return probes to a thread calling work
// without a pause, counts in place for a moment and detaches. Only the
// call running when the probes are armed, and the one running when they
// are disarmed, may be cut short: none stamped in the time links take to
// go in or come out.
func TestReturnAttachWindow(t *testing.T) {
	need.Uprobes(t)
	bin := fixture.C(t, "et_work.c")
	cmd := startReady(t, bin, "spin")
	sites := resolve(t, bin, "return:work")
	for range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		res, err := (&Engine{}).Trace(ctx, probe.Target{PIDs: []int{cmd.Process.Pid}, Tally: true}, sites, func(*probe.Event) {})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Tallies) != 1 || res.Tallies[0].Hits < 100 {
			t.Fatalf("tallies %+v", res.Tallies)
		}
		for _, l := range res.Notices {
			var n int
			if _, err := fmt.Sscan(l, &n); err == nil && n > 1 {
				t.Errorf("%d calls timed: %s", res.Tallies[0].Hits, l)
			}
		}
	}
}
