//go:build linux && amd64

package ptrace

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/probe"
)

// threadLines are a trace's events as one line each, grouped by thread
// (in each thread's order, threads sorted), tids and times left out.
func threadLines(evs []*probe.Event) []string {
	by := map[int][]string{}
	var order []int
	for _, e := range evs {
		if _, ok := by[e.TID]; !ok {
			order = append(order, e.TID)
		}
		l := fmt.Sprintf("%s %s %v", e.Kind, e.Func, e.Args)
		if e.Ret != nil {
			l += fmt.Sprintf(" = %d", int64(e.Ret.Int))
		}
		by[e.TID] = append(by[e.TID], l)
	}
	var out []string
	for _, tid := range order {
		out = append(out, strings.Join(by[tid], "\n"))
	}
	slices.Sort(out)
	return out
}

// padRetCompare traces pt_ret args with an entry probe and its return
// beside it on each of fns, pads on and off, and wants the same events,
// output and exit; with pads, the returns cost no stop.
func padRetCompare(t *testing.T, follow bool, fns []string, args ...string) (pads, bps traced) {
	t.Helper()
	bin := retFixture(t)
	var sites []probe.Site
	for _, fn := range fns {
		sites = append(sites, siteAt(t, bin, fn, 0, argFetch(1)), retSite(t, bin, fn))
	}
	run := func(noPads bool) traced {
		var tr traced
		tr.evs, tr.out, tr.res, tr.runStats = padRunWith(t, &Engine{NoPads: noPads}, probe.Target{Argv: append([]string{bin}, args...), Follow: follow}, sites)
		return tr
	}
	pads, bps = run(false), run(true)
	if pads.pads == 0 {
		t.Fatalf("no pads")
	}
	// A call's entry and return in one event (Target.Pairs): taken
	// apart, the same events.
	var paired int
	var evs []*probe.Event
	apart := probe.Unpaired(func(e *probe.Event) { evs = append(evs, e) })
	pout, _, _ := padRunWithEmit(t, &Engine{}, probe.Target{Argv: append([]string{bin}, args...), Follow: follow, Pairs: true}, sites, func(e *probe.Event) {
		if e.Return != nil {
			paired++
		}
		apart(e)
	})
	if pl, ql := threadLines(pads.evs), threadLines(evs); !slices.Equal(pl, ql) || pout != pads.out {
		t.Fatalf("pads' events:\n%s\npaired, taken apart:\n%s", strings.Join(pl, "\n--\n"), strings.Join(ql, "\n--\n"))
	}
	pads.paired = paired
	// And without events (Target.Calls), every third call declined: the
	// same events again, the calls made whole and the declined ones'.
	cw := &callEvents{}
	cout, _, _ := padRunWithEmit(t, &Engine{}, probe.Target{Argv: append([]string{bin}, args...), Follow: follow, Pairs: true, Calls: cw}, sites, cw.emit)
	if pl, ql := threadLines(pads.evs), threadLines(cw.evs); !slices.Equal(pl, ql) || cout != pads.out {
		t.Fatalf("pads' events:\n%s\nas Calls:\n%s", strings.Join(pl, "\n--\n"), strings.Join(ql, "\n--\n"))
	}
	pads.calls = cw.calls
	if cw.badTimes > 0 {
		t.Fatalf("%d Calls without their times", cw.badTimes)
	}
	if pads.out != bps.out || pads.res.ExitCode != bps.res.ExitCode {
		t.Fatalf("pads: exit %d %q; breakpoints: exit %d %q", pads.res.ExitCode, pads.out, bps.res.ExitCode, bps.out)
	}
	pl, bl := threadLines(pads.evs), threadLines(bps.evs)
	if !slices.Equal(pl, bl) {
		t.Fatalf("pads' events:\n%s\nbreakpoints':\n%s", strings.Join(pl, "\n--\n"), strings.Join(bl, "\n--\n"))
	}
	return pads, bps
}

// callEvents is a probe.CallWriter turning Calls (whole, or an entry
// alone) into the events they stand for, declining every third; emit
// takes the events, apart.
type callEvents struct {
	evs   []*probe.Event
	n     int
	calls int // taken
	// badTimes: Calls (Timed) without a time, with a negative
	// duration or a return before the entry, or no return probe.
	badTimes int
}

func (c *callEvents) Takes(int, string) bool { return true }

func (c *callEvents) Timed() bool { return true }

func (c *callEvents) Call(call *probe.Call) bool {
	if c.n++; c.n%3 == 0 {
		return false
	}
	if call.TimeNs <= 0 || call.DurationNs < 0 || call.Return >= 0 && (call.ReturnNs < call.TimeNs || call.ReturnProbe == "") {
		c.badTimes++
	}
	c.evs = append(c.evs, &probe.Event{PID: call.PID, TID: call.TID, Probe: call.Probe, Func: call.Func, Kind: "entry", ProbeIndex: call.Entry, Args: cloneValues(call.Args), TimeNs: call.TimeNs})
	if call.Return < 0 {
		return true // an entry alone
	}
	c.calls++
	ret := call.Ret
	ret.Str = strings.Clone(ret.Str)
	c.evs = append(c.evs, &probe.Event{PID: call.PID, TID: call.TID, Probe: call.ReturnProbe, Func: call.Func, Kind: "return", ProbeIndex: call.Return, Args: cloneValues(call.Out), Ret: &ret,
		TimeNs: call.ReturnNs, DurationNs: call.DurationNs})
	return true
}

// cloneValues copies vs and their strings: a Call's are valid only
// while it is taken.
func cloneValues(vs []probe.Value) []probe.Value {
	vs = slices.Clone(vs)
	for i := range vs {
		vs[i].Str = strings.Clone(vs[i].Str)
	}
	return vs
}

func (c *callEvents) emit(ev *probe.Event) {
	probe.Apart(ev, func(e *probe.Event) error {
		cp := *e
		cp.Return = nil
		c.evs = append(c.evs, &cp)
		return nil
	})
}

func TestPadReturns(t *testing.T) {
	need.Root(t)
	for _, c := range []struct {
		name string
		fns  []string
		args []string
	}{
		{"rec", []string{"rec"}, []string{"rec", "100"}},
		// even keeps its breakpoint (a branch in its first bytes): the
		// two kinds of hijacks nest.
		{"mutual", []string{"even", "odd"}, []string{"mutual", "50"}},
		{"tail call", []string{"tail_a", "tail_b"}, []string{"tail", "20"}},
		{"longjmp", []string{"bail", "leaf"}, []string{"jmp", "20"}},
		{"signal", []string{"outer", "leaf"}, []string{"sig", "20"}},
		// nz starts `test %rdi,%rdi; je`: its pad runs the je.
		{"jcc at entry", []string{"nz"}, []string{"nz", "30"}},
		{"threads", []string{"rec"}, []string{"threads", "200"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, _ := padRetCompare(t, false, c.fns, c.args...)
			if p.stops > 100 && c.name != "mutual" {
				t.Errorf("%d stops with pads", p.stops)
			}
			// mutual: odd, padded, calls even, a breakpoint, before it
			// returns: none of its calls is an entry and its return
			// alone.
			if p.paired == 0 && c.name != "mutual" {
				t.Errorf("Pairs: no call came in one event")
			}
			if p.calls == 0 && c.name != "mutual" {
				t.Errorf("Calls: no call came without events")
			}
		})
	}
}

// A fork in a padded function: both processes return through it, the
// child by its copy of the shadow stacks, followed or let go.
func TestPadReturnsFork(t *testing.T) {
	need.Root(t)
	for _, follow := range []bool{false, true} {
		t.Run(fmt.Sprint("follow=", follow), func(t *testing.T) {
			p, _ := padRetCompare(t, follow, []string{"forker"}, "fork", "5")
			if !strings.Contains(p.out, "child exit=7") {
				t.Fatalf("output %q", p.out)
			}
		})
	}
}

// Recursion deeper than a thread's shadow stack: the calls below it are
// not hijacked (their returns not seen, counted and said), every call
// returns where it should, and the returns of the others are seen.
func TestPadReturnsTooDeep(t *testing.T) {
	need.Root(t)
	defer func(d int) { padDepth = d }(padDepth)
	padDepth = 16
	bin := retFixture(t)
	sites := []probe.Site{siteAt(t, bin, "rec", 0, argFetch(1)), retSite(t, bin, "rec")}
	evs, out, res, st := padRun(t, false, probe.Target{Argv: []string{bin, "rec", "40"}}, sites)
	if out != "rec r=40\n" || res.ExitCode != 0 || st.pads != 1 {
		t.Fatalf("exit %d, output %q, %d pads", res.ExitCode, out, st.pads)
	}
	var entries, rets []string
	for _, e := range evs {
		if e.Kind == "entry" {
			entries = append(entries, fmt.Sprint(e.Args[0].Int))
		} else {
			rets = append(rets, fmt.Sprint(e.Ret.Int))
		}
	}
	// rec(40) .. rec(25) are hijacked, rec(n) returns n, the innermost
	// first.
	want := []string{}
	for n := 25; n <= 40; n++ {
		want = append(want, fmt.Sprint(n))
	}
	if len(entries) != 41 || !slices.Equal(rets, want) {
		t.Fatalf("%d entries, returns %v, want %v", len(entries), rets, want)
	}
	if !slices.ContainsFunc(res.Notices, func(n string) bool { return strings.Contains(n, "25 returns not seen") }) {
		t.Fatalf("notices %q", res.Notices)
	}
}
