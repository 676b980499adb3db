//go:build linux && amd64

package pad

import (
	"math"
	"math/rand"
	"slices"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/utap/utap/internal/agg"
	"github.com/utap/utap/internal/jit"
	"github.com/utap/utap/probe"
)

// aggPadUnderTest builds the pad of spec (an aggregation on work) with
// its table after a ring of 16 records, in a shared mapping of this
// process, as padUnderTest does.
func aggPadUnderTest(t *testing.T, spec string, slots int) (*jit.Func, *Ring, []byte, AggTable) {
	t.Helper()
	s, cond, fetches := compileSpec(t, spec)
	var keys []int
	for _, k := range s.Agg.Keys {
		keys = append(keys, k.Fetch)
	}
	const n = 16
	tab := NewAggTable(0, s.Agg.Kind, len(keys), slots, 1<<24)
	mem, err := unix.Mmap(-1, 0, Size(n)+tab.Size(), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Munmap(mem) })
	r, err := NewRing(mem, n)
	if err != nil {
		t.Fatal(err)
	}
	base := uint64(uintptr(unsafe.Pointer(&mem[0])))
	code, _, err := Build(Spec{
		ID: 3, Addr: 0x401000, Cond: cond, Fetches: fetches,
		Ring: base, Records: n,
		Agg:       &AggSite{Table: base + uint64(Size(n)), T: tab, Value: s.Agg.Value, Keys: keys},
		Displaced: func(uint64) ([]byte, error) { return []byte{0xc3}, nil },
	}, 0x10000)
	if err != nil {
		t.Fatal(err)
	}
	return jitFunc(t, code), r, mem[Size(n):], tab
}

// The table a pad fills holds what agg computes from the same values, for
// every kind, hist and lhist buckets included (negative, zero, huge
// values, lhist's bounds, a step that is not a power of two); the pad
// keeps every register and flag, and writes no record.
func TestPadAggTable(t *testing.T) {
	vals := []int64{0, 1, 2, 3, 4, 7, 8, 9, -1, -5, math.MinInt64, math.MaxInt64, 1 << 40, 99, 100, 101, 250, 17, 33}
	for _, spec := range []string{
		"work => count() by arg2",
		"work => sum(arg1) by arg2",
		"work => min(arg1) by arg2",
		"work => max(arg1) by arg2",
		"work => avg(arg1)",
		"work => stats(arg1) by arg2",
		"work => hist(arg1) by arg2",
		"work => lhist(arg1, 0, 100, 10) by arg2",
		"work => lhist(arg1, -20, 260, 7) by arg2, arg2 + 1",
		"work if arg1 > 2 => hist(arg1 * 2) by arg2",
	} {
		t.Run(spec, func(t *testing.T) {
			f, r, mem, tab := aggPadUnderTest(t, spec, 64)
			s, _ := probe.Parse(spec)
			want := map[int64]*agg.State{}
			rnd := rand.New(rand.NewSource(4))
			for i := range 400 {
				v, key := vals[i%len(vals)], int64(i%5)
				call(t, f, rnd, uint64(v), uint64(key))
				if s.Cond != nil && uint64(v) <= 2 { // untyped: unsigned
					continue
				}
				if s.Cond != nil {
					v *= 2
				}
				if want[key] == nil {
					want[key] = &agg.State{}
				}
				s.Agg.Kind.Add(want[key], v)
			}
			if r.Reserved() != 0 {
				t.Fatalf("%d records, want none", r.Reserved())
			}
			got := map[int64]agg.State{}
			tab.ReadAgg(mem, func(sl *AggSlot) {
				k := int64(0)
				if len(sl.Keys) > 0 {
					k = int64(sl.Keys[0])
				}
				if s.Agg.Keys == nil {
					k = 0
				}
				if sl.Site != 3 {
					t.Errorf("slot %d: site %d", sl.Index, sl.Site)
				}
				st := sl.State
				st.Buckets = slices.Clone(st.Buckets)
				got[k] = st
			})
			if s.Agg.Keys == nil {
				all := &agg.State{}
				for _, st := range want {
					all.Merge(*st)
				}
				want = map[int64]*agg.State{0: all}
			}
			if len(got) != len(want) {
				t.Fatalf("%d keys, want %d", len(got), len(want))
			}
			for k, w := range want {
				g := got[k]
				sums := s.Agg.Kind.Func == agg.Sum || s.Agg.Kind.Func == agg.Avg || s.Agg.Kind.Func == agg.Stats
				if g.Count != w.Count || (sums && g.Sum != w.Sum) || !slices.Equal(g.Buckets, w.Buckets) ||
					(s.Agg.Kind.Func == agg.Min && g.Min != w.Min) || (s.Agg.Kind.Func == agg.Max && g.Max != w.Max) {
					t.Errorf("key %d: got %+v, want %+v", k, g, *w)
				}
			}
		})
	}
}

// More keys than a table holds: the hits that find no slot write their
// records, counted in the header; none is lost.
func TestPadAggOverflow(t *testing.T) {
	f, r, mem, tab := aggPadUnderTest(t, "work => count() by arg2", 4)
	rnd := rand.New(rand.NewSource(5))
	for i := range 10 {
		call(t, f, rnd, 0, uint64(i))
	}
	var inTable uint64
	tab.ReadAgg(mem, func(sl *AggSlot) { inTable += sl.State.Count })
	fell := tab.Header(mem, AggFallbacks)
	if inTable != 4 || fell != 6 || r.Reserved() != 6 {
		t.Fatalf("%d in the table, %d fell back, %d records; want 4, 6, 6", inTable, fell, r.Reserved())
	}
	// The keys in the table still take their hits.
	tab.ReadAgg(mem, func(sl *AggSlot) {
		call(t, f, rnd, 0, sl.Keys[0])
	})
	inTable = 0
	tab.ReadAgg(mem, func(sl *AggSlot) { inTable += sl.State.Count })
	if inTable != 8 || r.Reserved() != 6 {
		t.Fatalf("%d in the table, %d records; want 8, 6", inTable, r.Reserved())
	}
	// Diverted (a vfork child in the memory), a hit writes its record.
	r.Divert(1)
	call(t, f, rnd, 0, 0)
	if r.Reserved() != 7 {
		t.Fatalf("%d records diverted, want 7", r.Reserved())
	}
}
