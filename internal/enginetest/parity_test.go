//go:build linux && amd64

package enginetest

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/probe"
)

// parityCases are traced by every engine; their event streams must match.
var parityCases = []struct {
	name    string
	fixture func(t *testing.T) string
	args    []string
	specs   []string
	follow  bool
	// unordered compares each process's events as a multiset: Go moves
	// goroutines between threads, so per-thread order is the scheduler's.
	unordered bool
	skip      string // a known engine bug that makes the engines differ
}{
	{name: "args", fixture: etWork, args: []string{"args"},
		specs: []string{"work(a, b)", "greet(str(s), n)", "peek(*p, n:x)", "work2(a:x, pid == tid)"}},
	{name: "threads", fixture: etWork, args: []string{"threads", "300", "4"},
		specs: []string{"work(a, b) if b % 3 != 1"}},
	{name: "fork follow", fixture: etWork, args: []string{"fork"}, follow: true, specs: []string{"work(a, b)"}},
	{name: "exec", fixture: etWork, args: []string{"exec"}, specs: []string{"work(a, b)"}},
	{name: "signals", fixture: etWork, args: []string{"signals"}, specs: []string{"work(a)"}},
	{name: "libc", fixture: etWork, args: []string{"libc"},
		specs: []string{"libc:open(str(arg1), arg2:x)", "libc:malloc(arg1) if arg1 > 10000", "open@plt"}},
	{name: "cli_work", fixture: func(t *testing.T) string { return fixture.C(t, "cli_work.c") }, args: []string{"20"},
		specs: []string{"work(arg1, arg2)", "greet(str(arg1):s)"}},
	{name: "go", fixture: ptGo, args: []string{"4", "200"}, specs: []string{"main.work(a, b)"}, unordered: true},
	{name: "return", fixture: etWork, args: []string{"fib", "8"}, specs: []string{"fib(n)", "return:fib(ret)"}},
}

func TestParity(t *testing.T) {
	engs := engines()
	for _, eng := range engs {
		if eng.Name() == "uprobe" {
			needEngine(t, eng)
		}
	}
	for _, pc := range parityCases {
		t.Run(strings.ReplaceAll(pc.name, " ", "_"), func(t *testing.T) {
			if pc.skip != "" {
				t.Skip(pc.skip)
			}
			argv := append([]string{pc.fixture(t)}, pc.args...)
			var want []string
			var wantCounts map[string]int
			for i, eng := range engs {
				o, err := traceRun(eng, pc.specs, argv, pc.follow)
				if err != nil {
					if hasReturn(pc.specs) && unsupported(err) {
						t.Skipf("%s engine has no return probes yet: %v", eng.Name(), err)
					}
					t.Fatalf("%s: %v", eng.Name(), err)
				}
				if hasReturn(pc.specs) {
					skipReturnAsEntry(t, eng, o.events, pc.specs)
				}
				for _, ev := range o.events {
					if ev.Kind == "return" && ev.DurationNs <= 0 {
						t.Skip(bugNoDuration(eng.Name()))
					}
				}
				got, counts := normalise(o.events, pc.unordered), countProbes(o.events)
				if len(got) == 0 {
					t.Fatalf("%s: no events", eng.Name())
				}
				if i == 0 {
					want, wantCounts = got, counts
					continue
				}
				if !maps.Equal(counts, wantCounts) {
					t.Errorf("events per probe: %s %v, %s %v", engs[0].Name(), wantCounts, eng.Name(), counts)
				}
				if d := diff(want, got); d != "" {
					t.Errorf("%s and %s differ (- %s, + %s):\n%s", engs[0].Name(), eng.Name(), engs[0].Name(), eng.Name(), d)
				}
			}
		})
	}
}

func countProbes(evs []probe.Event) map[string]int {
	n := map[string]int{}
	for _, ev := range evs {
		n[ev.Probe]++
	}
	return n
}

// normalise turns events into lines that compare across runs and engines:
// timestamps and durations dropped, PIDs named by order of first
// appearance ("process 1"), the main thread "main" and other threads by
// their events, since thread creation order is the scheduler's. Lines are
// grouped per process, then per thread, in order.
func normalise(evs []probe.Event, unordered bool) []string {
	var pids []int
	perThread := map[int]map[int][]string{} // pid → tid → events
	for _, ev := range evs {
		if perThread[ev.PID] == nil {
			pids = append(pids, ev.PID)
			perThread[ev.PID] = map[int][]string{}
		}
		tid := ev.TID
		if unordered {
			tid = ev.PID
		}
		perThread[ev.PID][tid] = append(perThread[ev.PID][tid], eventText(ev))
	}
	var out []string
	for n, pid := range pids {
		threads := perThread[pid]
		var others [][]string
		for tid, seq := range threads {
			if unordered {
				slices.Sort(seq)
			}
			if tid == pid {
				for _, s := range seq {
					out = append(out, fmt.Sprintf("process %d main: %s", n+1, s))
				}
			} else {
				others = append(others, seq)
			}
		}
		slices.SortFunc(others, func(a, b []string) int { return slices.Compare(a, b) })
		for i, seq := range others {
			for _, s := range seq {
				out = append(out, fmt.Sprintf("process %d thread %d: %s", n+1, i+1, s))
			}
		}
	}
	return out
}

// eventText is every field of an event but the clock's.
func eventText(ev probe.Event) string {
	s := fmt.Sprintf("[%s] %s %s", ev.Probe, ev.Kind, line(ev))
	if ev.Kind == "return" && ev.DurationNs <= 0 {
		s += " (no duration)"
	}
	return s
}

// diff shows where two line lists part, with some context.
func diff(a, b []string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	if i == len(a) && i == len(b) {
		return ""
	}
	var s strings.Builder
	fmt.Fprintf(&s, "%d and %d lines; first difference at line %d\n", len(a), len(b), i+1)
	for j := max(0, i-3); j < i; j++ {
		fmt.Fprintf(&s, "  %s\n", a[j])
	}
	for j := i; j < min(len(a), i+8); j++ {
		fmt.Fprintf(&s, "- %s\n", a[j])
	}
	for j := i; j < min(len(b), i+8); j++ {
		fmt.Fprintf(&s, "+ %s\n", b[j])
	}
	return s.String()
}
