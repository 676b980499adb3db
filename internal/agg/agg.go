// Package agg computes bpftrace's aggregations (count, sum, min, max, avg,
// stats, hist, lhist) per key, and prints them as bpftrace does.
//
// Today the CLI feeds it one value per event (Map.Add). The API is made so
// that an engine can later aggregate where the probe fires (BPF maps in the
// kernel engine, shared memory in pads) and hand back per-key partial
// aggregates: a State is such a partial aggregate, and Map.Merge adds one
// in, so events and engine-side states can feed the same Map.
package agg

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"
)

// Func is an aggregation function.
type Func uint8

const (
	Count Func = iota
	Sum
	Min
	Max
	Avg
	Stats // count, average and total
	Hist  // power-of-two buckets
	LHist // linear buckets: LHist(v, min, max, step)
)

var funcNames = [...]string{"count", "sum", "min", "max", "avg", "stats", "hist", "lhist"}

func (f Func) String() string {
	if int(f) < len(funcNames) {
		return funcNames[f]
	}
	return fmt.Sprintf("Func(%d)", f)
}

// FuncByName returns the aggregation function called name.
func FuncByName(name string) (Func, bool) {
	i := slices.Index(funcNames[:], name)
	return Func(i), i >= 0
}

// Kind is what a map computes: its function and, for LHist, its buckets.
type Kind struct {
	Func           Func
	Min, Max, Step int64 // LHist only
}

// Check says whether k's parameters make buckets: lhist's step must
// divide max - min, so the last bucket ends at max as its label says.
func (k Kind) Check() error {
	if k.Func != LHist {
		return nil
	}
	switch {
	case k.Step <= 0:
		return fmt.Errorf("lhist step %d: want a step above 0", k.Step)
	case k.Max <= k.Min:
		return fmt.Errorf("lhist min %d, max %d: want max above min", k.Min, k.Max)
	case (k.Max-k.Min)%k.Step != 0:
		return fmt.Errorf("lhist min %d, max %d, step %d: want max - min a multiple of step", k.Min, k.Max, k.Step)
	case (k.Max-k.Min)/k.Step > MaxLinearBuckets:
		return fmt.Errorf("lhist min %d, max %d, step %d: %d buckets, want at most %d", k.Min, k.Max, k.Step, (k.Max-k.Min)/k.Step, MaxLinearBuckets)
	}
	return nil
}

// MaxLinearBuckets bounds an lhist's buckets between min and max.
const MaxLinearBuckets = 4096

// HistBuckets is how many buckets a hist has: negative values, 0, 1, then
// [2^k, 2^(k+1)) for k = 1..62.
const HistBuckets = 65

// buckets is the length of State.Buckets for k; 0 for unbucketed kinds.
func (k Kind) buckets() int {
	switch k.Func {
	case Hist:
		return HistBuckets
	case LHist:
		return int((k.Max-k.Min)/k.Step) + 2 // and below min, at or above max
	}
	return 0
}

// Bucket is the index of v's bucket in a State of kind k (Hist or LHist).
func (k Kind) Bucket(v int64) int {
	if k.Func == LHist {
		n := int((k.Max - k.Min) / k.Step)
		switch {
		case v < k.Min:
			return 0
		case v >= k.Max:
			return n + 1
		}
		return 1 + int((v-k.Min)/k.Step)
	}
	if v < 0 {
		return 0
	}
	return 1 + bits.Len64(uint64(v)) // 0 → 1, 1 → 2, [2, 4) → 3...
}

// State is one key's aggregate, or a part of it: states of one Kind
// merge (State.Merge), whoever computed them.
type State struct {
	Count    uint64
	Sum      int64
	Min, Max int64    // meaningful when Count > 0
	Buckets  []uint64 // Hist, LHist: counts by Kind.Bucket
}

// Add adds one value to s, a state of kind k.
func (k Kind) Add(s *State, v int64) {
	if s.Count == 0 || v < s.Min {
		s.Min = v
	}
	if s.Count == 0 || v > s.Max {
		s.Max = v
	}
	s.Count++
	s.Sum += v
	if n := k.buckets(); n > 0 {
		if len(s.Buckets) != n {
			s.Buckets = make([]uint64, n)
		}
		s.Buckets[k.Bucket(v)]++
	}
}

// Merge adds o, a state of the same kind, into s.
func (s *State) Merge(o State) {
	if o.Count == 0 {
		return
	}
	if s.Count == 0 || o.Min < s.Min {
		s.Min = o.Min
	}
	if s.Count == 0 || o.Max > s.Max {
		s.Max = o.Max
	}
	s.Count += o.Count
	s.Sum += o.Sum
	if len(o.Buckets) > 0 {
		if len(s.Buckets) < len(o.Buckets) {
			s.Buckets = append(s.Buckets, make([]uint64, len(o.Buckets)-len(s.Buckets))...)
		}
		for i, c := range o.Buckets {
			s.Buckets[i] += c
		}
	}
}

// Value is the number a count, sum, min, max or avg map shows for s
// (bpftrace's avg is an integer division).
func (k Kind) Value(s State) int64 {
	switch k.Func {
	case Count:
		return int64(s.Count)
	case Min:
		return s.Min
	case Max:
		return s.Max
	case Avg, Stats:
		if s.Count == 0 {
			return 0
		}
		return s.Sum / int64(s.Count)
	}
	return s.Sum
}

// Part is one part of a key: a number, a string or a user stack.
type Part struct {
	Text  string   // as shown: the number as its format says, the string
	Int   int64    // for sorting, when IsInt
	IsInt bool     //
	Stack []string // a stack's frames, innermost first (Text unused)
}

func (p Part) text() string {
	if p.Stack == nil {
		return p.Text
	}
	var b strings.Builder
	b.WriteByte('\n')
	for _, f := range p.Stack {
		b.WriteString("    ")
		b.WriteString(f)
		b.WriteByte('\n')
	}
	return b.String()
}

// id is a key's identity in a map: parts joined by a byte no text holds.
func id(key []Part) string {
	var b strings.Builder
	for _, p := range key {
		b.WriteString(p.text())
		b.WriteByte(0)
	}
	return b.String()
}

// Entry is one key of a map with its state.
type Entry struct {
	Key   []Part
	State State
}

// Map is one aggregation: a name (bpftrace's @name) and a state per key.
// It is not safe for concurrent use; Set is.
type Map struct {
	Name    string
	Kind    Kind
	entries map[string]*Entry
}

// NewMap returns an empty map.
func NewMap(name string, k Kind) *Map {
	return &Map{Name: name, Kind: k, entries: map[string]*Entry{}}
}

func (m *Map) entry(key []Part) *Entry {
	k := id(key)
	e := m.entries[k]
	if e == nil {
		e = &Entry{Key: slices.Clone(key)}
		m.entries[k] = e
	}
	return e
}

// Add adds one value under key (count ignores it).
func (m *Map) Add(key []Part, v int64) { m.Kind.Add(&m.entry(key).State, v) }

// Merge adds a partial aggregate under key.
func (m *Map) Merge(key []Part, s State) { m.entry(key).State.Merge(s) }

// Len is the number of keys.
func (m *Map) Len() int { return len(m.entries) }

// Entries returns the keys in bpftrace's order: by value, smallest first
// (hists by their count), ties by key.
func (m *Map) Entries() []Entry {
	out := make([]Entry, 0, len(m.entries))
	for _, e := range m.entries {
		out = append(out, *e)
	}
	rank := func(e Entry) int64 {
		if m.Kind.Func == Hist || m.Kind.Func == LHist {
			return int64(e.State.Count)
		}
		return m.Kind.Value(e.State)
	}
	slices.SortFunc(out, func(a, b Entry) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			if ra < rb {
				return -1
			}
			return 1
		}
		return compareKeys(a.Key, b.Key)
	})
	return out
}

func compareKeys(a, b []Part) int {
	for i := range min(len(a), len(b)) {
		x, y := a[i], b[i]
		switch {
		case x.IsInt && y.IsInt && x.Int != y.Int:
			if x.Int < y.Int {
				return -1
			}
			return 1
		case x.text() != y.text():
			return strings.Compare(x.text(), y.text())
		}
	}
	return len(a) - len(b)
}
