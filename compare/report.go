//go:build linux && amd64

package compare

import (
	"fmt"
	"math"
	"time"
)

// Report is the outcome of one compare run, what every output format shows.
type Report struct {
	Command  string    `json:"command"`  // the utap compare command line that made it
	Machine  string    `json:"machine"`  // kernel, CPUs, as uname and nproc say
	Workload string    `json:"workload"` // which workload program ran (C or Go) and why
	Repeat   int       `json:"repeat"`
	Runs     int       `json:"runs,omitempty"` // whole runs merged (--runs): each row's Drift is over them
	Unit     string    `json:"unit,omitempty"` // what a row's cost is per: "call" (the default) or "event"
	Date     time.Time `json:"date"`
	Rows     []Row     `json:"rows"`
}

// Row is one tool tracing one scenario.
type Row struct {
	Tool     string `json:"tool"`     // "utap ptrace", "ltrace", ...
	Scenario string `json:"scenario"` // Scenario.Name
	Command  string `json:"command"`  // the command line run, with BIN, OUT, N placeholders

	// PerEvent is the cost of one event in µs over the repetitions, the
	// untraced workload's own cost per call subtracted.
	PerEvent Spread  `json:"us_per_event"`
	Ratio    float64 `json:"ratio,omitempty"` // median over the fastest ranked median of the scenario; 0 when not ranked
	Startup  float64 `json:"startup_ms"`      // median start-up and tear-down beyond the untraced run's, ms

	Calls    [2]int `json:"calls"`    // the two call counts of the slope
	Seen     int    `json:"seen"`     // events reported by the run with most calls (the worst repetition)
	Expected int    `json:"expected"` // events it should have reported

	// Flag says why a measured row is not ranked (dropped events);
	// Skip says why a row was not measured at all (n/a).
	Flag string `json:"flag,omitempty"`
	Skip string `json:"skip,omitempty"`
	// Note says something about how a measured row was measured.
	Note string `json:"note,omitempty"`

	// BelowNoise marks a cost within the noise of zero: some repetition
	// measured no more than the untraced run's own spread. Its PerEvent
	// stays the raw slopes (maybe negative); Noise is the bound it lies
	// below, and no ratio is computed from it.
	BelowNoise bool    `json:"below_noise,omitempty"`
	Noise      float64 `json:"noise,omitempty"`
	// BaseNoise is the untraced run's spread (max - min) in the row's unit:
	// what subtracting the untraced median may be off by.
	BaseNoise float64 `json:"base_noise,omitempty"`

	// Baseline marks the untraced workload's row: its PerEvent and Startup
	// are the raw ones the traced rows have had subtracted.
	Baseline bool `json:"baseline,omitempty"`

	// Mode is how the row was measured: "" by the slope between two call
	// counts; ModeTotal by one count, start-up included; ModeAttach in ms
	// per 1,000 probes attached and detached (Calls are probe counts).
	Mode string `json:"mode,omitempty"`
	// Values are the row's cost in each repetition, what PerEvent sums up.
	Values []float64 `json:"values,omitempty"`
	// Medians are the row's median in each of several runs (--runs), and
	// Drift the largest distance of one from their median, as a fraction.
	Medians []float64 `json:"medians,omitempty"`
	Drift   float64   `json:"drift,omitempty"`
}

// Row modes.
const (
	ModeTotal  = "total"
	ModeAttach = "attach"
)

// Ranked reports whether the row takes part in the ratio ranking.
func (r *Row) Ranked() bool { return r.Skip == "" && r.Flag == "" && !r.Baseline }

// CheckEvents flags a run that reported other than the expected number of
// events: a tracer that drops events looks fast for the wrong reason.
func CheckEvents(seen, expected int) string {
	switch {
	case seen < expected:
		return fmt.Sprintf("dropped %d of %d events", expected-seen, expected)
	case seen > expected:
		return fmt.Sprintf("%d events more than the %d expected", seen-expected, expected)
	}
	return ""
}

// Rank judges every measured row against the noise and sets Ratio on
// every ranked row: its median over the smallest median of the ranked rows
// of the same scenario. A scenario whose fastest ranked row is within the
// noise of zero gets no ratios: a ratio to about nothing means nothing.
func Rank(rows []Row) {
	fastest := map[string]float64{}
	noisy := map[string]bool{}
	for i := range rows {
		r := &rows[i]
		judgeNoise(r)
		if !r.Ranked() {
			continue
		}
		if r.BelowNoise {
			noisy[r.Scenario] = true
		} else if m := r.PerEvent.Median; fastest[r.Scenario] == 0 || m < fastest[r.Scenario] {
			fastest[r.Scenario] = m
		}
	}
	for i := range rows {
		r := &rows[i]
		r.Ratio = 0
		if f := fastest[r.Scenario]; r.Ranked() && !r.BelowNoise && !noisy[r.Scenario] && f > 0 {
			r.Ratio = Ratio(r.PerEvent.Median, f)
		}
	}
}

// judgeNoise sets BelowNoise and Noise on a measured row: the cost is
// within the noise of zero when its lowest repetition is no more than the
// untraced run's spread; it then lies below the largest of its highest
// repetition, the depth of its lowest below zero and that spread.
func judgeNoise(r *Row) {
	r.BelowNoise, r.Noise = false, 0
	if r.Skip != "" || r.Baseline {
		return
	}
	p := r.PerEvent
	if p.Min > r.BaseNoise {
		return
	}
	r.BelowNoise = true
	r.Noise = math.Max(math.Max(p.Max, -p.Min), r.BaseNoise)
}
