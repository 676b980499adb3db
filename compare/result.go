//go:build linux && amd64

package compare

import (
	"fmt"
	"math"
)

// slopes are the job's per-call costs and start-ups, one per repetition.
func (j *job) slopes() (us, ms []float64) {
	for _, p := range j.reps {
		s, err1 := Slope(p[0], p[1])
		i, err2 := Intercept(p[0], p[1])
		if err1 == nil && err2 == nil {
			us, ms = append(us, s), append(ms, i)
		}
	}
	return us, ms
}

// result turns the job's samples into its row: the baseline's median slope
// and start-up subtracted from each repetition.
func (j *job) result() Row {
	row := j.row
	if row.Skip != "" {
		row.Calls = [2]int{}
		return row
	}
	if j.single {
		return j.totalResult()
	}
	us, ms := j.slopes()
	if j.base != nil {
		bus, bms := j.base.slopes()
		if len(bus) > 0 {
			du, dm := Median(bus), Median(bms)
			for i := range us {
				us[i] -= du
				ms[i] -= dm
			}
			b := Summarize(bus)
			row.BaseNoise = b.Max - b.Min
		}
	}
	if per := j.sc.Expect.PerN; j.sc.Specs != nil && per > 0 {
		// The slope is per unit of N, which makes per events.
		for i := range us {
			us[i] /= float64(per)
		}
		row.BaseNoise /= float64(per)
	}
	row.Values = us
	row.PerEvent = Summarize(us)
	row.Startup = Median(ms)
	if math.IsNaN(row.Startup) {
		row.Startup = 0
	}
	row.Flag = CheckEvents(row.Seen, row.Expected)
	if j.broken != nil {
		row.Flag = j.broken.Error()
	}
	if j.sc.Attach && row.Calls[1] < j.sc.Probes {
		row.Note = fmt.Sprintf("slow: measured up to %d probes, scaled to %d", row.Calls[1], j.sc.Probes)
	}
	return row
}

// totalResult is the row of the user's command without {N}: each
// repetition's extra wall time over the untraced median, per expected event.
func (j *job) totalResult() Row {
	row := j.row
	row.Calls = [2]int{}
	var base float64
	n := float64(max(j.sc.Expect.Const, 1))
	if j.base != nil {
		base = Median(j.base.walls)
		b := Summarize(j.base.walls)
		row.BaseNoise = (b.Max - b.Min) / n
	}
	var us []float64
	for _, w := range j.walls {
		us = append(us, (w-base)/n)
	}
	row.Values = us
	row.PerEvent = Summarize(us)
	row.Flag = CheckEvents(row.Seen, row.Expected)
	return row
}
