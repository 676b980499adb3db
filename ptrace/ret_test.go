//go:build linux && amd64

package ptrace

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"os/exec"
	"testing"
	"time"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/probe"
	"github.com/utap/utap/uretprobe"
)

// retSite is the return probe of fn in bin.
func retSite(t testing.TB, bin, fn string, fetches ...probe.Fetch) probe.Site {
	t.Helper()
	s := siteAt(t, bin, fn, 0, fetches...)
	s.Spec.Kind = probe.Return
	s.Spec.Text = "return:" + fn
	return s
}

// traced is one run's events, output, result and number of ptrace stops.
type traced struct {
	evs []*probe.Event
	out string
	res probe.Result
	runStats
	paired int // calls emitted in one event (Target.Pairs)
	calls  int // calls taken without events (Target.Calls)
}

func traceRet(t *testing.T, follow bool, sites []probe.Site, argv ...string) traced {
	t.Helper()
	return traceRetWith(t, &Engine{}, follow, sites, argv...)
}

// traceRetWith is traceRet with the engine e.
func traceRetWith(t *testing.T, e *Engine, follow bool, sites []probe.Site, argv ...string) traced {
	t.Helper()
	var out bytes.Buffer
	var tr traced
	e.stats = &tr.runStats
	res, err := e.Trace(context.Background(), probe.Target{Argv: argv, Stdout: &out, Follow: follow}, sites,
		func(e *probe.Event) { tr.evs = append(tr.evs, e) })
	if err != nil {
		t.Fatalf("Trace: %v", err)
	}
	tr.out, tr.res = out.String(), res
	return tr
}

// count returns the number of events of kind for fn.
func (tr traced) count(kind, fn string) int {
	n := 0
	for _, e := range tr.evs {
		if e.Kind == kind && e.Func == fn {
			n++
		}
	}
	return n
}

func (tr traced) check(t *testing.T, out string) {
	t.Helper()
	if tr.out != out || tr.res.ExitCode != 0 {
		t.Fatalf("exit %d, output %q, want %q", tr.res.ExitCode, tr.out, out)
	}
}

func retFixture(t testing.TB) string {
	return fixture.C(t, "pt_ret.c", "-O2", "-g", "-pthread")
}

func TestReturnRecursion10000(t *testing.T) {
	need.Root(t)
	bin := retFixture(t)
	const depth = 10000
	sites := []probe.Site{siteAt(t, bin, "rec", 0, argFetch(1)), retSite(t, bin, "rec")}
	// Deeper than a pad's shadow stack (TestPadReturnsTooDeep): the
	// breakpoints' holds 65536 calls.
	tr := traceRetWith(t, &Engine{NoPads: true}, false, sites, bin, "rec", fmt.Sprint(depth))
	tr.check(t, fmt.Sprintf("rec r=%d\n", depth))
	if n := len(tr.evs); n != 2*(depth+1) {
		t.Fatalf("%d events, want %d", n, 2*(depth+1))
	}
	for i, e := range tr.evs[depth+1:] {
		// Innermost first: rec(0) returns 0, rec(1) returns 1, ...
		if e.Kind != "return" || e.Ret == nil || e.Ret.Int != uint64(i) || !e.Ret.Signed || e.DurationNs <= 0 {
			t.Fatalf("return %d: %+v", i, e)
		}
	}
	// Entry + trampoline: two stops per call, plus a fixed few (start-up:
	// the loader's rendezvous, exit), measured by a run of one call.
	one := traceRetWith(t, &Engine{NoPads: true}, false, sites, bin, "rec", "0")
	if per := float64(tr.stops-one.stops) / depth; per > 2 {
		t.Errorf("%d stops for %d calls: %.3f per call", tr.stops, depth+1, per)
	}
	t.Logf("%d stops for %d calls", tr.stops, depth+1)
}

func TestReturnMutualRecursion(t *testing.T) {
	need.Root(t)
	bin := retFixture(t)
	sites := []probe.Site{retSite(t, bin, "even"), retSite(t, bin, "odd")}
	tr := traceRet(t, false, sites, bin, "mutual", "1001")
	tr.check(t, "mutual r=0\n")
	if e, o := tr.count("return", "even"), tr.count("return", "odd"); e != 501 || o != 501 {
		t.Fatalf("even %d, odd %d returns; want 501 each", e, o)
	}
	for i, e := range tr.evs {
		if e.Ret.Int != 0 {
			t.Fatalf("return %d: ret %d", i, e.Ret.Int)
		}
	}
}

func TestReturnTailCall(t *testing.T) {
	need.Root(t)
	bin := retFixture(t)
	sites := []probe.Site{retSite(t, bin, "tail_a"), retSite(t, bin, "tail_b"), siteAt(t, bin, "tail_b", 0)}
	tr := traceRet(t, false, sites, bin, "tail", "5")
	tr.check(t, "tail r=15\n")
	// Per call: entry of tail_b, then both return through one trampoline
	// trap, innermost first.
	var got []string
	for _, e := range tr.evs {
		s := e.Kind + ":" + e.Func
		if e.Ret != nil {
			s += fmt.Sprintf("=%d", e.Ret.Int)
		}
		got = append(got, s)
	}
	var want []string
	for i := range 5 {
		want = append(want, "entry:tail_b", fmt.Sprintf("return:tail_b=%d", i+1), fmt.Sprintf("return:tail_a=%d", i+1))
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("events\n%v\nwant\n%v", got, want)
	}
	// Three stops per call: the entries of tail_a and tail_b, and one
	// trampoline trap for both returns. The fixed ones come from a run of
	// no call.
	none := traceRet(t, false, sites, bin, "tail", "0")
	if per := float64(tr.stops-none.stops) / 5; per > 3 {
		t.Errorf("%d stops for 5 calls", tr.stops)
	}
}

func TestReturnLongjmp(t *testing.T) {
	need.Root(t)
	bin := retFixture(t)
	sites := []probe.Site{retSite(t, bin, "bail"), retSite(t, bin, "leaf")}
	tr := traceRet(t, false, sites, bin, "jmp", "50")
	tr.check(t, "jmp r=2450\n")
	if b, l := tr.count("return", "bail"), tr.count("return", "leaf"); b != 0 || l != 50 {
		t.Fatalf("bail %d, leaf %d returns; want 0, 50", b, l)
	}
}

func TestReturnSignalHandler(t *testing.T) {
	need.Root(t)
	bin := retFixture(t)
	sites := []probe.Site{retSite(t, bin, "outer"), retSite(t, bin, "leaf")}
	tr := traceRet(t, false, sites, bin, "sig", "20")
	tr.check(t, "sig r=610\n")
	if o, l := tr.count("return", "outer"), tr.count("return", "leaf"); o != 20 || l != 20 {
		t.Fatalf("outer %d, leaf %d returns; want 20 each", o, l)
	}
	// The handler's leaf returns inside outer: leaf's return comes first.
	if tr.evs[0].Func != "leaf" || tr.evs[1].Func != "outer" {
		t.Fatalf("first events %s, %s", tr.evs[0].Func, tr.evs[1].Func)
	}
}

func TestReturnThreads(t *testing.T) {
	need.Root(t)
	bin := retFixture(t)
	sites := []probe.Site{retSite(t, bin, "rec")}
	tr := traceRet(t, false, sites, bin, "threads", "500")
	tr.check(t, "threads r=20000\n")
	per := map[int]int{}
	for _, e := range tr.evs {
		per[e.TID]++
	}
	if len(tr.evs) != 4*500*11 || len(per) != 4 {
		t.Fatalf("%d returns over %d threads, want %d over 4", len(tr.evs), len(per), 4*500*11)
	}
}

func TestReturnFork(t *testing.T) {
	need.Root(t)
	bin := retFixture(t)
	for _, follow := range []bool{false, true} {
		t.Run(fmt.Sprintf("follow=%v", follow), func(t *testing.T) {
			sites := []probe.Site{retSite(t, bin, "forker")}
			tr := traceRet(t, follow, sites, bin, "fork", "1")
			tr.check(t, "child r=101\nchild exit=7 sig=0\nfork r=1\n")
			want := map[uint64]bool{1: true}
			if follow {
				want[101] = true
			}
			got := map[uint64]bool{}
			for _, e := range tr.evs {
				got[e.Ret.Int] = true
			}
			if len(tr.evs) != len(want) || fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("returns %v, want %v", got, want)
			}
		})
	}
}

func TestReturnDuration(t *testing.T) {
	need.Root(t)
	bin := retFixture(t)
	const ms = 50
	tr := traceRet(t, false, []probe.Site{retSite(t, bin, "nap")}, bin, "nap", fmt.Sprint(ms))
	var took int64
	if _, err := fmt.Sscanf(tr.out, "took %d\nnap r=50\n", &took); err != nil || tr.res.ExitCode != 0 {
		t.Fatalf("exit %d, output %q: %v", tr.res.ExitCode, tr.out, err)
	}
	if len(tr.evs) != 1 {
		t.Fatalf("%d events", len(tr.evs))
	}
	// At least the sleep, at most what the caller timed around the call
	// (however loaded the machine, which only stretches both).
	if d := tr.evs[0].DurationNs; d < ms*1e6 || d > took {
		t.Fatalf("duration %d ns: want %d ms at least, %d ns (the caller's clock) at most", d, ms, took)
	}
	d := tr.evs[0].DurationNs
	t.Logf("nap(%d ms): %d ns", ms, d)
}

func TestReturnCxxThrow(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "pt_throw.cc", "-O2", "-g")
	sites := []probe.Site{retSite(t, bin, "thrower"), retSite(t, bin, "middle"), retSite(t, bin, "leaf"), siteAt(t, bin, "middle", 0)}
	tr := traceRet(t, false, sites, bin, "20")
	tr.check(t, "caught=20 cleanups=100 sum=210\n")
	// The frames an exception unwinds never return; leaf always does.
	if l, m := tr.count("return", "leaf"), tr.count("entry", "middle"); l != 20 || m != 100 {
		t.Fatalf("leaf %d returns, middle %d entries; want 20, 100", l, m)
	}
	if n := tr.count("return", "thrower") + tr.count("return", "middle"); n != 0 {
		t.Fatalf("%d returns of unwound frames", n)
	}
}

func TestReturnGoStackGrowth(t *testing.T) {
	need.Root(t)
	bin := fixture.Go(t, "pt_retgo")
	entry := siteAt(t, bin, "main.deep", 0)
	ret := retSite(t, bin, "main.deep")
	for _, s := range []*probe.Site{&entry, &ret} {
		s.ABI, s.GoFunc = probe.ABIGoRegs, true
	}
	// Entry after the stack check, as elfsym places Go entries.
	entry = goEntrySite(t, bin, entry)
	const g, r, d = 8, 10, 200
	calls := g * r * (d + 1)
	tr := traceRet(t, false, []probe.Site{entry, ret}, bin, fmt.Sprint(g), fmt.Sprint(r), fmt.Sprint(d))
	tr.check(t, fmt.Sprintf("calls=%d sum=%d\n", calls, g*r*(d/2+1)))
	if e, x := tr.count("entry", "main.deep"), tr.count("return", "main.deep"); e != calls || x != calls {
		t.Fatalf("%d entries, %d returns; want %d each", e, x, calls)
	}
	paired := 0
	for _, e := range tr.evs {
		if e.Kind == "return" && e.DurationNs > 0 {
			paired++
		}
	}
	if paired != calls {
		t.Errorf("%d of %d returns have a duration", paired, calls)
	}
}

// goEntrySite moves a Go function's entry site after its stack check.
func goEntrySite(t *testing.T, bin string, s probe.Site) probe.Site {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	text := f.Section(".text")
	code := make([]byte, s.FuncSize)
	if _, err := text.ReadAt(code, int64(s.FuncAddr-text.Addr)); err != nil {
		t.Fatal(err)
	}
	entry, err := uretprobe.GoEntry(code, s.FuncAddr)
	if err != nil || entry == s.FuncAddr {
		t.Fatalf("GoEntry = %#x, %v", entry, err)
	}
	ns := siteAt(t, bin, s.Func, entry-s.FuncAddr, s.Fetches...)
	ns.ABI, ns.GoFunc = s.ABI, s.GoFunc
	return ns
}

func TestReturnDetachMidCall(t *testing.T) {
	need.Root(t)
	bin := retFixture(t)
	cmd := exec.Command(bin, "loop", "100")
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(stdout)
	lines.Scan() // running
	pid := cmd.Process.Pid
	maps0, code0 := snapshot(t, pid)

	// Detach right after an entry: nap is sleeping with its return
	// address hijacked.
	ctx, cancel := context.WithCancel(context.Background())
	sites := []probe.Site{siteAt(t, bin, "nap", 0), retSite(t, bin, "nap")}
	var evs []*probe.Event
	done := make(chan error)
	go func() {
		_, err := (&Engine{}).Trace(ctx, probe.Target{PIDs: []int{pid}}, sites, func(e *probe.Event) {
			evs = append(evs, e)
			if e.Kind == "entry" && len(evs) > 2 {
				cancel()
			}
		})
		done <- err
	}()
	got := make(chan string, 100)
	go func() {
		for lines.Scan() {
			got <- lines.Text()
		}
		close(got)
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("trace did not stop")
	}
	if n := len(evs); n < 3 || evs[n-1].Kind != "entry" {
		t.Fatalf("%d events, last %+v", n, evs[n-1])
	}
	// The call in progress returns to its caller, untraced, and the loop
	// goes on.
	for range 3 {
		select {
		case l, ok := <-got:
			if !ok {
				t.Fatalf("output ended: %v", cmd.Wait())
			}
			t.Log(l)
		case <-time.After(5 * time.Second):
			t.Fatal("no output after detach")
		}
	}
	maps1, code1 := snapshot(t, pid)
	if maps0 != maps1 || string(code0) != string(code1) {
		t.Errorf("maps or code differ after detach")
	}
}

// With the CET shadow stack on, C functions get RET probes instead.
func TestReturnShadowStackFallback(t *testing.T) {
	need.Root(t)
	shadowStackEnabled = func(int) (bool, error) { return true, nil }
	defer func() { shadowStackEnabled = defaultShadowStackEnabled }()
	bin := retFixture(t)
	sites := []probe.Site{retSite(t, bin, "rec"), retSite(t, bin, "leaf")}
	tr := traceRet(t, false, sites, bin, "threads", "200")
	tr.check(t, "threads r=8000\n")
	if n := tr.count("return", "rec"); n != 4*200*11 {
		t.Fatalf("%d returns, want %d", n, 4*200*11)
	}
	for _, e := range tr.evs {
		if e.DurationNs <= 0 || e.Ret == nil {
			t.Fatalf("return without duration: %+v", e)
		}
	}
	tr = traceRet(t, false, sites, bin, "jmp", "30")
	tr.check(t, "jmp r=870\n")
	if n := tr.count("return", "leaf"); n != 30 {
		t.Fatalf("%d returns of leaf, want 30", n)
	}
}
