//go:build linux && amd64

package compare

import (
	"fmt"
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

// Rank sets Ratio on every ranked row: its median over the smallest
// positive median of the ranked rows of the same scenario. A median at or
// below zero is lost in the noise and gets no ratio.
func Rank(rows []Row) {
	fastest := map[string]float64{}
	for _, r := range rows {
		m := r.PerEvent.Median
		if r.Ranked() && m > 0 && (fastest[r.Scenario] == 0 || m < fastest[r.Scenario]) {
			fastest[r.Scenario] = m
		}
	}
	for i := range rows {
		r := &rows[i]
		r.Ratio = 0
		if f := fastest[r.Scenario]; r.Ranked() && f > 0 && r.PerEvent.Median > 0 {
			r.Ratio = Ratio(r.PerEvent.Median, f)
		}
	}
}
