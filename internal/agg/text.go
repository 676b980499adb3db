package agg

import (
	"fmt"
	"strconv"
	"strings"
)

// barWidth is the width of bpftrace's histogram bars.
const barWidth = 52

// AppendText appends m as bpftrace prints a map: one line per key for
// count, sum, min and max; a line and a blank one per key for avg and
// stats; a histogram and a blank line per key for hist and lhist. An
// unkeyed count or sum that never fired shows 0, so that a probe that
// never fired still shows.
func (m *Map) AppendText(b []byte) []byte {
	entries := m.Entries()
	if len(entries) == 0 && (m.Kind.Func == Count || m.Kind.Func == Sum) {
		return fmt.Appendf(b, "%s: 0\n", m.Name)
	}
	for _, e := range entries {
		b = append(b, m.Name...)
		b = appendKey(b, e.Key, ", ")
		b = append(b, ": "...)
		switch m.Kind.Func {
		case Hist, LHist:
			b = append(b, '\n')
			b = m.Kind.appendHist(b, e.State)
			b = append(b, '\n')
		case Stats:
			b = fmt.Appendf(b, "count %d, average %d, total %d\n\n", e.State.Count, m.Kind.Value(e.State), e.State.Sum)
		case Avg:
			b = fmt.Appendf(b, "%d\n\n", m.Kind.Value(e.State))
		default:
			b = fmt.Appendf(b, "%d\n", m.Kind.Value(e.State))
		}
	}
	return b
}

// appendKey appends "[part, part]", or nothing for an unkeyed map.
func appendKey(b []byte, key []Part, sep string) []byte {
	if len(key) == 0 {
		return b
	}
	b = append(b, '[')
	for i, p := range key {
		if i > 0 {
			b = append(b, sep...)
		}
		b = append(b, p.text()...)
	}
	return append(b, ']')
}

// shown is the range of buckets printed: the first to the last non-empty.
func shown(s State) (lo, hi int) {
	lo, hi = -1, -1
	for i, c := range s.Buckets {
		if c > 0 {
			if lo < 0 {
				lo = i
			}
			hi = i
		}
	}
	return lo, hi
}

// appendHist appends the rows of a histogram: label, count, bar, as
// bpftrace's "[4, 8)   12 |@@@@@@@@   |".
func (k Kind) appendHist(b []byte, s State) []byte {
	lo, hi := shown(s)
	if lo < 0 {
		return b
	}
	var top uint64
	for _, c := range s.Buckets[lo : hi+1] {
		top = max(top, c)
	}
	for i := lo; i <= hi; i++ {
		c := s.Buckets[i]
		n := int(c * barWidth / top)
		b = fmt.Appendf(b, "%-16s%8d |%s%s|\n", k.Label(i), c, strings.Repeat("@", n), strings.Repeat(" ", barWidth-n))
	}
	return b
}

// Label is bucket i's label as bpftrace prints it: "(..., 0)", "[0]",
// "[1]", "[2, 4)", "[1K, 2K)"; for lhist "(..., min)", "[lo, hi)",
// "[max, ...)".
func (k Kind) Label(i int) string {
	if k.Func == LHist {
		n := len64(k)
		switch {
		case i == 0:
			return "(..., " + number(k.Min) + ")"
		case i > n:
			return "[" + number(k.Max) + ", ...)"
		}
		lo := k.Min + int64(i-1)*k.Step
		return "[" + number(lo) + ", " + number(lo+k.Step) + ")"
	}
	switch i {
	case 0:
		return "(..., 0)"
	case 1:
		return "[0]"
	case 2:
		return "[1]"
	}
	return "[" + unsigned(1<<(i-2)) + ", " + unsigned(1<<(i-1)) + ")"
}

// Range is bucket i's values, lo..hi inclusive; hasLo and hasHi are
// false for the open ends (below 0 or min, at or above max).
func (k Kind) Range(i int) (lo, hi int64, hasLo, hasHi bool) {
	if k.Func == LHist {
		switch {
		case i == 0:
			return 0, k.Min - 1, false, true
		case i > len64(k):
			return k.Max, 0, true, false
		}
		lo := k.Min + int64(i-1)*k.Step
		return lo, lo + k.Step - 1, true, true
	}
	switch i {
	case 0:
		return 0, -1, false, true
	case 1, 2:
		return int64(i - 1), int64(i - 1), true, true
	}
	return 1 << (i - 2), 1<<(i-1) - 1, true, true
}

func len64(k Kind) int { return int((k.Max - k.Min) / k.Step) }

// number prints v as bpftrace labels buckets: a multiple of 1024^n with
// its suffix (1K, 3K, 1M...), else in decimal.
func number(v int64) string {
	if v < 0 {
		return "-" + unsigned(uint64(-v))
	}
	return unsigned(uint64(v))
}

func unsigned(v uint64) string {
	suffix := ""
	for _, s := range []string{"K", "M", "G", "T", "P", "E"} {
		if v == 0 || v%1024 != 0 {
			break
		}
		v /= 1024
		suffix = s
	}
	return strconv.FormatUint(v, 10) + suffix
}
