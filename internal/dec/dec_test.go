package dec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

func TestAppend(t *testing.T) {
	vals := []int64{0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, -1, -9, -10, -100,
		math.MaxInt64, math.MinInt64, math.MaxInt32, math.MinInt32}
	for p := int64(1); p > 0 && p <= math.MaxInt64/10; p *= 10 {
		vals = append(vals, p-1, p, p+1, -p, -p+1)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		vals = append(vals, int64(r.Uint64()), int64(r.Uint64()>>r.IntN(64)))
	}
	for _, v := range vals {
		if got, want := string(AppendInt([]byte("x"), v)), "x"+strconv.FormatInt(v, 10); got != want {
			t.Fatalf("AppendInt(%d) = %q, want %q", v, got, want)
		}
		u := uint64(v)
		if got, want := string(AppendUint(make([]byte, 0, 3), u)), strconv.FormatUint(u, 10); got != want {
			t.Fatalf("AppendUint(%d) = %q, want %q", u, got, want)
		}
	}
	if got := string(AppendUint(nil, math.MaxUint64)); got != strconv.FormatUint(math.MaxUint64, 10) {
		t.Fatalf("MaxUint64: %q", got)
	}
}

func BenchmarkAppendUint(b *testing.B) {
	buf := make([]byte, 0, 64)
	for i := range b.N {
		buf = AppendUint(buf[:0], uint64(i)*7919)
	}
}

func BenchmarkStrconvAppendUint(b *testing.B) {
	buf := make([]byte, 0, 64)
	for i := range b.N {
		buf = strconv.AppendUint(buf[:0], uint64(i)*7919, 10)
	}
}

// BenchmarkAppendCounter: a trace's usual numbers, a counter and a small
// constant, as the default trace's work(i, 2) = i+2.
func BenchmarkAppendCounter(b *testing.B) {
	buf := make([]byte, 0, 64)
	i := uint64(1000000)
	for b.Loop() {
		buf = AppendUint(AppendUint(AppendUint(buf[:0], i), 2), i+2)
		i++
	}
}

func TestAppendPad6(t *testing.T) {
	for _, v := range []uint64{0, 1, 9, 10, 99, 100, 1234, 9999, 10000, 12345, 99999, 100000, 123456, 999999} {
		if got, want := string(AppendPad6([]byte("x"), v)), fmt.Sprintf("x%06d", v); got != want {
			t.Errorf("%d: %q, want %q", v, got, want)
		}
	}
}
