package summary

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"
)

func TestBuckets(t *testing.T) {
	// Every value falls in the bucket whose bounds hold it, and buckets
	// tile the range without gaps.
	for _, v := range []uint64{0, 1, 63, 64, 65, 127, 128, 129, 1000, 1 << 20, 3600e9, math.MaxUint64} {
		g, sub := bucket(v)
		low, width := bounds(g, sub)
		if v < low || v-low >= width {
			t.Errorf("%d in bucket (%d,%d) = [%d, +%d)", v, g, sub, low, width)
		}
		if width > 1 && float64(width)/float64(low) > 1.0/64 {
			t.Errorf("bucket of %d too wide: %d/%d", v, width, low)
		}
	}
	for v := uint64(0); v < 5000; v++ {
		g, sub := bucket(v)
		if low, width := bounds(g, sub); v+1 == low+width {
			if g2, s2 := bucket(v + 1); g2*subBuckets+s2 != g*subBuckets+sub+1 {
				t.Fatalf("gap after %d", v)
			}
		}
	}
}

// exact is the nearest-rank quantile of sorted values.
func exact(sorted []uint64, q float64) uint64 {
	rank := int(math.Ceil(q * float64(len(sorted))))
	return sorted[max(rank, 1)-1]
}

func TestQuantileAccuracy(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	dists := map[string]func() uint64{
		// 1 ns to 1 h, uniform in log scale.
		"log-uniform": func() uint64 { return uint64(math.Exp(r.Float64() * math.Log(3600e9))) },
		// Around 20 µs with a long tail, as traced calls look.
		"lognormal": func() uint64 { return uint64(20e3 * math.Exp(r.NormFloat64())) },
		"small":     func() uint64 { return r.Uint64N(200) },
	}
	for name, gen := range dists {
		t.Run(name, func(t *testing.T) {
			var h Histogram
			vals := make([]uint64, 100000)
			for i := range vals {
				vals[i] = gen()
				h.Record(vals[i])
			}
			slices.Sort(vals)
			var worst float64
			for _, q := range []float64{0, 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 1} {
				want, got := exact(vals, q), h.Quantile(q)
				e := math.Abs(float64(got)-float64(want)) / math.Max(float64(want), 1)
				worst = max(worst, e)
				if e > 0.01 {
					t.Errorf("q%g = %d, exact %d: error %.3f%%", q, got, want, 100*e)
				}
			}
			if h.Min() != vals[0] || h.Max() != vals[len(vals)-1] || h.Count() != uint64(len(vals)) {
				t.Errorf("min/max/count %d %d %d", h.Min(), h.Max(), h.Count())
			}
			var sum uint64
			for _, v := range vals {
				sum += v
			}
			if h.Sum() != sum {
				t.Errorf("sum %d, want %d", h.Sum(), sum)
			}
			t.Logf("worst relative error %.3f%%, %d bytes", 100*worst, h.bytes())
			if h.bytes() > 22<<10 {
				t.Errorf("%d bytes for 1 ns – 1 h", h.bytes())
			}
		})
	}
}

func TestHistogramMerge(t *testing.T) {
	var a, b, all Histogram
	for v := uint64(1); v < 100000; v += 7 {
		if v%3 == 0 {
			a.Record(v)
		} else {
			b.Record(v)
		}
		all.Record(v)
	}
	a.Merge(&b)
	if a.Count() != all.Count() {
		t.Fatal("counts differ")
	}
	for _, q := range []float64{0.1, 0.5, 0.99} {
		if a.Quantile(q) != all.Quantile(q) {
			t.Errorf("q%g: merged %d, direct %d", q, a.Quantile(q), all.Quantile(q))
		}
	}
	if a.Min() != all.Min() || a.Max() != all.Max() || a.Sum() != all.Sum() {
		t.Error("merged min/max/sum differ")
	}
	var empty Histogram
	if empty.Quantile(0.5) != 0 || empty.Mean() != 0 {
		t.Error("empty histogram not zero")
	}
}

// bytes is the histogram's memory footprint.
func (h *Histogram) bytes() int {
	n := int(unsafe.Sizeof(*h))
	for _, g := range h.groups {
		if g != nil {
			n += int(unsafe.Sizeof(*g))
		}
	}
	return n
}

func BenchmarkRecord(b *testing.B) {
	var h Histogram
	r := rand.New(rand.NewPCG(1, 2))
	vals := make([]uint64, 1024)
	for i := range vals {
		vals[i] = uint64(20e3 * math.Exp(r.NormFloat64()))
	}
	b.ResetTimer()
	for i := range b.N {
		h.Record(vals[i&1023])
	}
}
