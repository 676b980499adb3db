//go:build linux && amd64

package compare

import (
	"fmt"
	"math"
	"sort"
	"time"
)

// Sample is one timed run: how many calls the workload made, how long the
// process took from exec to exit, and how many events the tool reported.
type Sample struct {
	Calls int
	Wall  time.Duration
	Seen  int
}

// Slope is the cost of one more call, in microseconds, from two runs that
// differ only in their call count; start-up and tear-down cancel.
func Slope(a, b Sample) (float64, error) {
	if a.Calls == b.Calls {
		return 0, fmt.Errorf("slope needs two different call counts (both %d)", a.Calls)
	}
	return float64(b.Wall-a.Wall) / float64(time.Microsecond) / float64(b.Calls-a.Calls), nil
}

// Intercept is the time, in milliseconds, a run with zero calls would take
// on the line through a and b: the tool's start-up and tear-down.
func Intercept(a, b Sample) (float64, error) {
	us, err := Slope(a, b)
	if err != nil {
		return 0, err
	}
	return (float64(a.Wall)/float64(time.Microsecond) - us*float64(a.Calls)) / 1000, nil
}

// Spread summarises repeated measurements.
type Spread struct {
	Min    float64 `json:"min"`
	Median float64 `json:"median"`
	Max    float64 `json:"max"`
}

// Summarize returns the minimum, median and maximum of xs (zero for none).
func Summarize(xs []float64) Spread {
	if len(xs) == 0 {
		return Spread{}
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return Spread{Min: s[0], Median: Median(s), Max: s[len(s)-1]}
}

// Median of xs; the mean of the middle two for an even count, NaN for none.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

// Ratio is how many times slower x is than the fastest, fastest > 0.
// Costs at or below zero (a tool cheaper than the noise) count as 1.
func Ratio(x, fastest float64) float64 {
	if fastest <= 0 || x <= fastest {
		return 1
	}
	return x / fastest
}
