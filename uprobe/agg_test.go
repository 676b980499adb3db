//go:build linux && amd64

package uprobe

import (
	"context"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf/asm"
	"github.com/utap/utap/internal/agg"
	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/probe"
)

// aggCase is a spec and, per call work(1, i), its key and value (ok
// false: the value's read faults).
type aggCase struct {
	text string
	hit  func(i int64) (key string, v int64, ok bool)
}

func aggCases() []aggCase {
	val := func(f func(i int64) int64) func(int64) (string, int64, bool) {
		return func(i int64) (string, int64, bool) { return "", f(i), true }
	}
	id := func(i int64) int64 { return i }
	return []aggCase{
		{"work => @c = count()", val(id)},
		{"work => @s = sum(arg2)", val(id)},
		{"work => @mn = min(arg2 - 50000)", val(func(i int64) int64 { return i - 50000 })},
		{"work => @mx = max(arg2)", val(id)},
		{"work => @a = avg(arg2)", val(id)},
		{"work => @st = stats(arg2)", val(id)},
		{"work => @h = hist(arg2 - 1000)", val(func(i int64) int64 { return i - 1000 })},
		{"work => @l = lhist(arg2 % 1000, 0, 100, 10)", val(func(i int64) int64 { return i % 1000 })},
		{"work => @k = sum(arg1) by arg2 % 7, arg2 % 3", func(i int64) (string, int64, bool) {
			return fmt.Sprintf("%d,%d", i%7, i%3), 1, true
		}},
		{"work if arg2 < 500 => @lo = count()", func(i int64) (string, int64, bool) { return "", 0, i < 500 }},
		{"work if arg2 >= 500 => @hi = count()", func(i int64) (string, int64, bool) { return "", 0, i >= 500 }},
		{"work => @p = count() by pid, tid, comm, func", nil},
		{"work => @u = sum(*(u64*)arg1)", func(i int64) (string, int64, bool) { return "", 0, false }},
		{"work => @fk = count() by *(u32*)arg1", func(i int64) (string, int64, bool) { return "?", 0, true }},
		{"return:work => @r = hist(ret)", val(func(i int64) int64 { return 1 + i })},
		{"work => @z = count() by str(arg1), arg2 % 2", func(i int64) (string, int64, bool) { return fmt.Sprintf("?,%d", i%2), 0, true }},
	}
}

// TestAggregateInKernel: 100,000 calls work(1, i), every aggregation
// function and kind of key, computed in BPF maps: only Kind "agg" events
// come (no event per hit), and their merge is exactly what adding each
// call's value gives, also when they come every millisecond as deltas,
// and from programs that cannot sleep.
func TestAggregateInKernel(t *testing.T) {
	need.Uprobes(t)
	bin := fixture.C(t, "et_work.c")
	const n = 100000
	cases := aggCases()
	var sites []probe.Site
	for i, c := range cases {
		spec, err := probe.Parse(c.text)
		if err != nil {
			t.Fatal(err)
		}
		site := funcSite(t, bin, "work", 0, spec)
		site.Probe = i
		sites = append(sites, site)
	}
	for _, v := range []struct {
		name    string
		every   time.Duration
		nosleep bool // non-sleepable programs, as on kernels before 6.0
	}{{"end", 0, false}, {"every1ms", time.Millisecond, false}, {"nosleep", 0, true}} {
		t.Run(v.name, func(t *testing.T) {
			if v.nosleep {
				saved := kernelReads
				kernelReads = func() reads { return reads{} }
				defer func() { kernelReads = saved }()
			}
			var verbose []string
			e := &Engine{Verbose: func(s string) { verbose = append(verbose, s) }}
			var evs []probe.Event // Trace's emits come one at a time
			res, err := e.Trace(context.Background(), probe.Target{Argv: []string{bin, "count", strconv.Itoa(n)}, Stdout: io.Discard,
				Aggregate: true, AggEvery: v.every}, sites, func(ev *probe.Event) { evs = append(evs, *ev) })
			if err != nil {
				t.Fatal(err)
			}
			if want := "aggregated in the kernel: 16 specs"; len(verbose) != 1 || verbose[0] != want {
				t.Errorf("verbose %q, want %q", verbose, want)
			}
			if res.Lost != 0 || len(res.Notices) != 0 {
				t.Errorf("lost %d, notices %q", res.Lost, res.Notices)
			}
			got := map[int]map[string]agg.State{}
			unreadable := map[int]uint64{}
			pid := 0
			for _, ev := range evs {
				if ev.Kind != "agg" || ev.Agg == nil {
					t.Fatalf("a %s event of %s: want only aggregates", ev.Kind, ev.Probe)
				}
				var parts []string
				for _, v := range ev.Agg.Key {
					switch {
					case v.Err:
						parts = append(parts, "?")
					case v.IsStr:
						parts = append(parts, v.Str)
					default:
						parts = append(parts, strconv.FormatInt(int64(v.Int), 10))
					}
				}
				key := strings.Join(parts, ",")
				if ev.ProbeIndex == 11 {
					pid = int(ev.Agg.Key[0].Int)
				}
				if got[ev.ProbeIndex] == nil {
					got[ev.ProbeIndex] = map[string]agg.State{}
				}
				unreadable[ev.ProbeIndex] += ev.Agg.Unreadable
				st := got[ev.ProbeIndex][key]
				st.Merge(ev.Agg.State)
				if st.Count == 0 {
					continue // unreadable only: no state, as the CLI's merge
				}
				got[ev.ProbeIndex][key] = st
			}
			t.Logf("%d aggregate events", len(evs))
			for i, cs := range cases {
				spec := sites[i].Spec
				want := map[string]agg.State{}
				var wantUnreadable uint64
				for x := range int64(n) {
					key, v, ok := "", int64(0), true
					if cs.hit != nil {
						key, v, ok = cs.hit(x)
					} else {
						comm := filepath.Base(bin)
						key = fmt.Sprintf("%d,%d,%s,work", pid, pid, comm[:min(len(comm), 15)])
					}
					if !ok {
						if spec.Cond == nil {
							wantUnreadable++
						}
						continue
					}
					st := want[key]
					spec.Agg.Kind.Add(&st, v)
					want[key] = st
				}
				shown(spec.Agg.Kind.Func, got[i])
				shown(spec.Agg.Kind.Func, want)
				if len(got[i]) == 0 {
					got[i] = nil
				}
				if len(want) == 0 {
					want = nil
				}
				if !reflect.DeepEqual(got[i], want) {
					t.Errorf("%s: got %+v, want %+v", cs.text, got[i], want)
				}
				if unreadable[i] != wantUnreadable {
					t.Errorf("%s: %d unreadable, want %d", cs.text, unreadable[i], wantUnreadable)
				}
			}
		})
	}
}

// shown keeps of each state what its function shows: the kernel keeps
// no more.
func shown(f agg.Func, m map[string]agg.State) {
	for k, st := range m {
		kept := agg.State{Count: st.Count, Buckets: st.Buckets}
		switch f {
		case agg.Sum, agg.Avg, agg.Stats:
			kept.Sum = st.Sum
		case agg.Min:
			kept.Min = st.Min
		case agg.Max:
			kept.Max = st.Max
		}
		m[k] = kept
	}
}

// TestAggArithmetic runs the bucket and bound code of aggregating in
// place in the kernel (BPF_PROG_TEST_RUN) over values fed one per run, the
// extremes included, against agg.Kind.Bucket and Go's min and max.
func TestAggArithmetic(t *testing.T) {
	need.Uprobes(t)
	lin := agg.Kind{Func: agg.LHist, Min: -(1 << 40), Max: 1<<40 + 3<<38, Step: 1 << 38}
	hist := agg.Kind{Func: agg.Hist}
	// One array element: 0 input, 8 hist bucket, 16 lhist bucket, 24 ^min
	// and 32 max, biased (agg.go).
	run := arithRig(t, 5, func(g *progGen) {
		g.histBucket(asm.R8)
		g.emit(asm.StoreMem(asm.R7, 8, asm.R1, asm.DWord))
		g.linearBucket(asm.R8, lin)
		g.emit(asm.StoreMem(asm.R7, 16, asm.R1, asm.DWord))
		g.emit(asm.LoadImm(asm.R9, math.MinInt64, asm.DWord), asm.Xor.Reg(asm.R9, asm.R8))
		g.keepLarger(asm.R7, 32, asm.R9)
		g.emit(asm.Xor.Imm(asm.R9, -1))
		g.keepLarger(asm.R7, 24, asm.R9)
	})

	vals := []int64{5, 0, 1, 2, 3, 4, -1, math.MaxInt64, math.MinInt64, 1 << 62, 1<<62 - 1, -(1 << 40), -(1 << 40) - 1,
		1<<40 + 3<<38, 1<<40 + 3<<38 - 1, 1 << 38, 1<<38 - 1, -(1 << 38)}
	for k := 0; k < 63; k++ {
		vals = append(vals, 1<<k-1, 1<<k, 1<<k+1, -(1 << k))
	}
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for _, v := range vals {
		cur := run(uint64(v))
		lo, hi = min(lo, v), max(hi, v)
		if gotHi, gotLo := int64(cur[4]^1<<63), int64(^cur[3]^1<<63); gotHi != hi || gotLo != lo {
			t.Fatalf("after %d: max %d min %d, want %d %d", v, gotHi, gotLo, hi, lo)
		}
		if want := uint64(hist.Bucket(v)); cur[1] != want {
			t.Errorf("hist bucket(%d) = %d, want %d", v, cur[1], want)
		}
		if want := uint64(lin.Bucket(v)); cur[2] != want {
			t.Errorf("lhist bucket(%d) = %d, want %d", v, cur[2], want)
		}
	}
}
