//go:build linux && amd64

package enginetest

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/utap/utap/internal/need"
)

// pidPrefix is a line's "[pid N] ", which differs between runs.
var pidPrefix = regexp.MustCompile(`^\[pid (\d+)\] `)

// resumed is the start of a call's line resumed after another thread's.
var resumed = regexp.MustCompile(`^<\.\.\. \w+ resumed> `)

// perThread is a trace's lines grouped by thread, each thread's in its
// order, without the tids, the threads sorted; a call another thread's
// line cut ("<unfinished ...>", "<... work resumed>") is one line again.
func perThread(text string) []string {
	by := map[string][]string{}
	for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
		tid := ""
		if m := pidPrefix.FindStringSubmatch(l); m != nil {
			tid, l = m[1], l[len(m[0]):]
		}
		ls := by[tid]
		if m := resumed.FindString(l); m != "" && len(ls) > 0 && strings.HasSuffix(ls[len(ls)-1], " <unfinished ...>") {
			ls[len(ls)-1] = strings.TrimSuffix(ls[len(ls)-1], " <unfinished ...>") + l[len(m):]
			continue
		}
		by[tid] = append(ls, l)
	}
	var out []string
	for _, ls := range by {
		out = append(out, strings.Join(ls, "\n"))
	}
	slices.Sort(out)
	return out
}

// TestCLIPadReturns: the default trace (a line per call with its return,
// an entry probe and its return twin) runs in-process, and its lines are
// the breakpoints' (--no-pads), thread by thread.
func TestCLIPadReturns(t *testing.T) {
	need.Root(t)
	bin := etWork(t)
	run := func(extra ...string) (string, string) {
		args := append([]string{"run", "-v", "--backend", "ptrace"}, extra...)
		return utapOut(t, append(args, "-e", "work(arg1, arg2)", "--", bin, "threads", "300", "4")...)
	}
	pads, stderr := run()
	if !strings.Contains(stderr, "its return in-process") {
		t.Fatalf("work's return has no pad:\n%s", stderr)
	}
	bps, _ := run("--no-pads")
	if p, b := perThread(pads), perThread(bps); !slices.Equal(p, b) {
		t.Fatalf("pads' lines:\n%s\nbreakpoints':\n%s", pads, bps)
	}
	if n := strings.Count(strings.Join(perThread(pads), "\n"), ") = "); n != 1200 {
		t.Fatalf("%d calls with their return, want 1200:\n%s", n, pads)
	}
}

// TestCLIPadReturnsTimed: the default trace with -r and -T (the calls
// carry their times without events, probe.Call): the lines are the
// breakpoints' but for the times, every call has its duration, and the
// relative stamps are times.
func TestCLIPadReturnsTimed(t *testing.T) {
	need.Root(t)
	bin := etWork(t)
	stamp := regexp.MustCompile(`^(\[pid \d+\] ) *\d+\.\d{6} `)
	dur := regexp.MustCompile(` <\d+\.\d{6}>$`)
	run := func(extra ...string) string {
		args := append([]string{"run", "-r", "-T", "--backend", "ptrace"}, extra...)
		data, _ := utapOut(t, append(args, "-e", "work(arg1, arg2)", "--", bin, "threads", "300", "2")...)
		var ls []string
		for _, l := range strings.Split(strings.TrimSpace(data), "\n") {
			if !stamp.MatchString(l) {
				t.Fatalf("%v: no -r stamp: %q", extra, l)
			}
			l = stamp.ReplaceAllString(l, "$1")
			if strings.Contains(l, ") = ") && !strings.HasPrefix(l, "+++") {
				if !dur.MatchString(l) {
					t.Fatalf("%v: a call without its duration: %q", extra, l)
				}
				l = dur.ReplaceAllString(l, "")
			}
			ls = append(ls, l)
		}
		return strings.Join(ls, "\n")
	}
	pads, bps := run(), run("--no-pads")
	if p, b := perThread(pads), perThread(bps); !slices.Equal(p, b) {
		t.Fatalf("pads' lines:\n%s\nbreakpoints':\n%s", pads, bps)
	}
}

// TestCLIPadReturns8Threads: 8 threads x 100k calls, the default trace:
// exactly 800,000 calls, each with its return (a call another thread's
// line cut takes two lines, "<unfinished ...>" and "<... resumed>", as
// in ltrace).
func TestCLIPadReturns8Threads(t *testing.T) {
	need.Root(t)
	bin := etWork(t)
	data, _ := utapOut(t, "run", "--backend", "ptrace", "-e", "work(arg1, arg2)", "--", bin, "threads", "100000", "8")
	calls, rets := 0, 0
	for _, th := range perThread(data) {
		for _, l := range strings.Split(th, "\n") {
			if strings.HasPrefix(l, "work(") {
				calls++
				if strings.Contains(l, ") = ") {
					rets++
				}
			}
		}
	}
	if calls != 800000 || rets != 800000 {
		t.Fatalf("%d calls, %d of them with their return; want 800000", calls, rets)
	}
}

// TestCLIPadReturnsJSON8Threads: the default trace as JSON (its calls
// written without events, jsonLines.Call), 8 threads x 50k calls: each
// thread's lines are its calls in order, work(thread, i) then its return
// a + b, with the return's probe and a time not before its entry's.
func TestCLIPadReturnsJSON8Threads(t *testing.T) {
	need.Root(t)
	bin := etWork(t)
	data, _ := utapOut(t, "run", "--backend", "ptrace", "--format", "json", "-e", "work(arg1, arg2)", "--", bin, "threads", "50000", "8")
	type line struct {
		TimeNs int64   `json:"time_ns"`
		TID    int     `json:"tid"`
		Probe  string  `json:"probe"`
		Kind   string  `json:"kind"`
		Args   []int64 `json:"args"`
		Ret    *int64  `json:"ret"`
	}
	type thread struct {
		entry *line
		next  int64
		calls int
	}
	threads := map[int]*thread{}
	for _, l := range strings.Split(strings.TrimSpace(data), "\n") {
		var ev line
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		if ev.Kind != "entry" && ev.Kind != "return" {
			continue // the exit's line
		}
		th := threads[ev.TID]
		if th == nil {
			th = &thread{}
			threads[ev.TID] = th
		}
		switch {
		case ev.Kind == "entry" && th.entry == nil && len(ev.Args) == 2 && ev.Args[1] == th.next && ev.Probe == "work(arg1, arg2)":
			th.entry = &ev
		case ev.Kind == "return" && th.entry != nil && ev.Ret != nil && *ev.Ret == th.entry.Args[0]+th.entry.Args[1] &&
			ev.Probe == "return:work" && ev.TimeNs >= th.entry.TimeNs:
			th.entry, th.next, th.calls = nil, th.next+1, th.calls+1
		default:
			t.Fatalf("thread %d, after %d calls: unexpected %s", ev.TID, th.calls, l)
		}
	}
	calls := 0
	for _, th := range threads {
		calls += th.calls
	}
	if len(threads) != 8 || calls != 400000 {
		t.Fatalf("%d threads, %d calls; want 8, 400000", len(threads), calls)
	}
}

// TestCLIPadCountReturns: -c times every call in-process (the return
// pads add to a tally block, no record): exact calls and errors at any
// rate, the same as the breakpoints' (--no-pads).
func TestCLIPadCountReturns(t *testing.T) {
	need.Root(t)
	bin := etWork(t)
	row := func(out string) []string {
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); len(f) > 0 && f[len(f)-1] == "work" {
				return f
			}
		}
		t.Fatalf("no row for work:\n%s", out)
		return nil
	}
	r := utap(t, "run", "-v", "-c", "--backend", "ptrace", "-e", "work", "--", bin, "threads", "100000", "8")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "its return in-process") {
		t.Fatalf("work's return has no pad:\n%s", r.stderr)
	}
	if f := row(r.stderr + r.stdout); f[3] != "800000" {
		t.Fatalf("calls %s, want 800000: %q", f[3], f)
	}
	// neg N: work(±i, 0), negative for odd i: N/2 errors.
	for _, extra := range [][]string{nil, {"--no-pads"}} {
		args := append([]string{"run", "-c", "--backend", "ptrace"}, extra...)
		r := utap(t, append(args, "-e", "work", "--", bin, "neg", "2000")...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d: %s", extra, r.code, r.stderr)
		}
		if f := row(r.stderr + r.stdout); f[3] != "2000" || f[4] != "1000" {
			t.Fatalf("%v: calls %s errors %s, want 2000 and 1000: %q", extra, f[3], f[4], f)
		}
	}
}
