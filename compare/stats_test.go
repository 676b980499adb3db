//go:build linux && amd64

package compare

import (
	"math"
	"testing"
	"time"
)

func TestSlope(t *testing.T) {
	// 300 ms of start-up, 20 µs a call: the start-up cancels.
	a := Sample{Calls: 1000, Wall: 300*time.Millisecond + 1000*20*time.Microsecond}
	b := Sample{Calls: 5000, Wall: 300*time.Millisecond + 5000*20*time.Microsecond}
	us, err := Slope(a, b)
	if err != nil || math.Abs(us-20) > 1e-9 {
		t.Errorf("Slope = %v, %v; want 20", us, err)
	}
	if us, _ := Slope(b, a); math.Abs(us-20) > 1e-9 {
		t.Errorf("Slope reversed = %v; want 20", us)
	}
	ms, err := Intercept(a, b)
	if err != nil || math.Abs(ms-300) > 1e-9 {
		t.Errorf("Intercept = %v, %v; want 300", ms, err)
	}
	if _, err := Slope(a, a); err == nil {
		t.Error("Slope of equal counts: no error")
	}
}

func TestMedianSummarize(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{{[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := Median(c.in); got != c.want {
			t.Errorf("Median(%v) = %v; want %v", c.in, got, c.want)
		}
	}
	if !math.IsNaN(Median(nil)) {
		t.Error("Median(nil) is not NaN")
	}
	in := []float64{9, 2, 5}
	if got := Summarize(in); got != (Spread{2, 5, 9}) {
		t.Errorf("Summarize = %+v", got)
	}
	if in[0] != 9 {
		t.Error("Summarize sorted its input")
	}
}

func TestRatio(t *testing.T) {
	for _, c := range []struct{ x, f, want float64 }{{40, 20, 2}, {20, 20, 1}, {10, 20, 1}, {5, 0, 1}} {
		if got := Ratio(c.x, c.f); got != c.want {
			t.Errorf("Ratio(%v, %v) = %v; want %v", c.x, c.f, got, c.want)
		}
	}
}

func TestCounts(t *testing.T) {
	for _, c := range []struct {
		us   float64
		most int
		want [2]int
	}{
		{0.002, 200000, [2]int{40000, 200000}}, // untraced: capped by --events
		{20, 200000, [2]int{15000, 75000}},     // 1.5 s / 20 µs
		{333, 200000, [2]int{900, 4500}},       // 4504 rounded down to two digits
		{1e6, 200000, [2]int{200, 1000}},       // never fewer than 1000
		{-5, 200000, [2]int{40000, 200000}},    // a noisy negative estimate
		// --events is what runs when it fits, unrounded, and never
		// exceeded, not even by the floor of 1000 (#25: --events 500 ran 1000).
		{0.002, 500, [2]int{100, 500}},
		{1e6, 500, [2]int{100, 500}},
		{0.002, 12345, [2]int{2469, 12345}},
	} {
		if got := Counts(c.us, 1500*time.Millisecond, c.most); got != c.want {
			t.Errorf("Counts(%v, most %d) = %v; want %v", c.us, c.most, got, c.want)
		}
	}
}
