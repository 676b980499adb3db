package summary

import "math/bits"

// Histogram counts durations (ns) in log-linear buckets, as HdrHistogram
// does: values below 64 exactly, then every power of two [2^e, 2^e+1)
// split into 64 equal buckets. A quantile is reported as the middle of its
// bucket, so its relative error is at most 1/128 (0.8%). Min, max, count
// and sum are exact.
//
// Buckets are allocated one power of two (512 bytes) at a time as values
// land in it: 2 KB for calls within a factor of 4 of each other, ~8 KB for
// a typical long-tailed spread (1 µs – 1 ms), 21 KB for the whole
// 1 ns – 1 h range, whatever the number of calls.
type Histogram struct {
	groups         [groups]*[subBuckets]uint64
	count, sum     uint64
	minimum, maxim uint64
}

const (
	subBits    = 6
	subBuckets = 1 << subBits // per power of two: relative width 1/64
	groups     = 64 - subBits + 1
)

// bucket returns the group and sub-bucket index of v. Group 0 holds
// 0..63 exactly; group g ≥ 1 holds [2^(g+5), 2^(g+6)).
func bucket(v uint64) (g, sub int) {
	if v < subBuckets {
		return 0, int(v)
	}
	e := bits.Len64(v) - 1 // ≥ subBits
	return e - subBits + 1, int(v>>(e-subBits)) - subBuckets
}

// bounds returns the lowest value of a bucket and its width.
func bounds(g, sub int) (low, width uint64) {
	if g == 0 {
		return uint64(sub), 1
	}
	shift := g - 1
	return uint64(subBuckets+sub) << shift, 1 << shift
}

// Record adds one value.
func (h *Histogram) Record(v uint64) {
	g, sub := bucket(v)
	if h.groups[g] == nil {
		h.groups[g] = new([subBuckets]uint64)
	}
	h.groups[g][sub]++
	if h.count == 0 || v < h.minimum {
		h.minimum = v
	}
	if v > h.maxim {
		h.maxim = v
	}
	h.count++
	h.sum += v
}

// Merge adds every value of o to h.
func (h *Histogram) Merge(o *Histogram) {
	if o.count == 0 {
		return
	}
	for g, grp := range o.groups {
		if grp == nil {
			continue
		}
		if h.groups[g] == nil {
			h.groups[g] = new([subBuckets]uint64)
		}
		for i, n := range grp {
			h.groups[g][i] += n
		}
	}
	if h.count == 0 || o.minimum < h.minimum {
		h.minimum = o.minimum
	}
	h.maxim = max(h.maxim, o.maxim)
	h.count += o.count
	h.sum += o.sum
}

// Count, Sum, Min and Max are exact.
func (h *Histogram) Count() uint64 { return h.count }
func (h *Histogram) Sum() uint64   { return h.sum }
func (h *Histogram) Min() uint64   { return h.minimum }
func (h *Histogram) Max() uint64   { return h.maxim }

// Mean is Sum/Count, 0 when empty.
func (h *Histogram) Mean() uint64 {
	if h.count == 0 {
		return 0
	}
	return h.sum / h.count
}

// Quantile returns the q-quantile (0 ≤ q ≤ 1) by nearest rank: the value
// at rank ⌈q·count⌉ in sorted order, within 1/128 of it; 0 when empty.
func (h *Histogram) Quantile(q float64) uint64 {
	if h.count == 0 {
		return 0
	}
	rank := uint64(q * float64(h.count))
	if float64(rank) < q*float64(h.count) {
		rank++
	}
	rank = max(rank, 1)
	var seen uint64
	for g, grp := range h.groups {
		if grp == nil {
			continue
		}
		for sub, n := range grp {
			if seen += n; seen >= rank {
				low, width := bounds(g, sub)
				return min(max(low+width/2, h.minimum), h.maxim)
			}
		}
	}
	return h.maxim
}

// Bucket is v's bucket as one index: v itself below 64, else
// (e-6)·64 + v>>(e-6) where 2^e ≤ v < 2^(e+1). Engines that count in the
// kernel compute it there and hand the counts to AddBuckets.
func Bucket(v uint64) int {
	g, sub := bucket(v)
	return g*subBuckets + sub
}

// AddBuckets adds counts per Bucket index, with the exact sum, minimum
// and maximum of the values counted.
func (h *Histogram) AddBuckets(counts map[int]uint64, sum, minimum, maxim uint64) {
	var n uint64
	for i, c := range counts {
		g, sub := i/subBuckets, i%subBuckets
		if i < 0 || g >= groups || c == 0 {
			continue
		}
		if h.groups[g] == nil {
			h.groups[g] = new([subBuckets]uint64)
		}
		h.groups[g][sub] += c
		n += c
	}
	if n == 0 {
		return
	}
	if h.count == 0 || minimum < h.minimum {
		h.minimum = minimum
	}
	h.maxim = max(h.maxim, maxim)
	h.count += n
	h.sum += sum
}
