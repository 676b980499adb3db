//go:build linux && amd64

package compare

import (
	"fmt"
	"math"
)

// MaxDrift is how far a row's median in one run may lie from the median
// over all runs, as a fraction, for the row to count as repeatable.
const MaxDrift = 0.15

// driftFloor is the smallest median (µs, or ms per 1,000 probes) whose
// drift is checked: below it the noise of the subtraction dominates.
const driftFloor = 1.0

// Unsteady reports whether the row's medians over several runs spread
// more than MaxDrift.
func (r *Row) Unsteady() bool { return r.Drift > MaxDrift }

// Merge combines reports of the same scenarios and tools measured in
// separate runs (--runs, or reports saved as JSON and merged later):
// each row's repetitions are pooled, its median in each run is kept in
// Medians, and Drift says how well those agree. A row n/a in any run is
// n/a in the merge.
func Merge(reps []*Report) (*Report, error) {
	if len(reps) == 0 {
		return nil, fmt.Errorf("merge: no reports")
	}
	first := reps[0]
	out := &Report{
		Command: first.Command, Machine: first.Machine, Workload: first.Workload, Unit: first.Unit,
		Repeat: first.Repeat, Date: reps[len(reps)-1].Date,
	}
	type key struct{ sc, tool string }
	index := map[key]int{}
	var startups [][]float64
	for n, rep := range reps {
		if rep.Workload != first.Workload {
			return nil, fmt.Errorf("merge: report %d traced %q, report 1 %q", n+1, rep.Workload, first.Workload)
		}
		out.Runs += max(rep.Runs, 1)
		for _, r := range rep.Rows {
			k := key{r.Scenario, r.Tool}
			i, ok := index[k]
			if !ok {
				i = len(out.Rows)
				index[k] = i
				m := r
				m.Values, m.Medians, m.Drift, m.Flag, m.Ratio = nil, nil, 0, "", 0
				m.BaseNoise = 0
				m.Seen, m.Expected = 0, 0
				out.Rows = append(out.Rows, m)
				startups = append(startups, nil)
			}
			m := &out.Rows[i]
			mergeRow(m, &r, n)
			if r.Skip == "" {
				startups[i] = append(startups[i], r.Startup)
			}
		}
	}
	for i := range out.Rows {
		m := &out.Rows[i]
		if m.Skip != "" {
			m.PerEvent, m.Values, m.Medians, m.Startup = Spread{}, nil, nil, 0
			continue
		}
		m.PerEvent = Summarize(m.Values)
		m.Startup = Median(startups[i])
		m.Drift = Drift(m.Medians)
		if m.Baseline {
			m.Drift = 0
		}
	}
	Rank(out.Rows)
	return out, nil
}

// mergeRow folds row r of run n into the merged row m.
func mergeRow(m, r *Row, n int) {
	if r.Skip != "" {
		if m.Skip == "" {
			m.Skip = fmt.Sprintf("run %d: %s", n+1, r.Skip)
		}
		return
	}
	m.Values = append(m.Values, r.Values...)
	m.BaseNoise = math.Max(m.BaseNoise, r.BaseNoise)
	if len(r.Medians) > 0 {
		m.Medians = append(m.Medians, r.Medians...)
	} else {
		m.Medians = append(m.Medians, r.PerEvent.Median)
	}
	if d, w := abs(r.Seen-r.Expected), abs(m.Seen-m.Expected); d > w || d == w && r.Expected >= m.Expected {
		m.Seen, m.Expected = r.Seen, r.Expected
	}
	if m.Flag == "" {
		m.Flag = r.Flag
	}
	if m.Note == "" {
		m.Note = r.Note
	}
}

// Drift is the largest distance of one of medians from their median, as
// a fraction of it; 0 for fewer than two, or a median too small to judge.
func Drift(medians []float64) float64 {
	if len(medians) < 2 {
		return 0
	}
	mid := Median(medians)
	if math.Abs(mid) < driftFloor {
		return 0
	}
	d := 0.0
	for _, m := range medians {
		d = math.Max(d, math.Abs(m-mid)/math.Abs(mid))
	}
	return d
}
