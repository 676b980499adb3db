//go:build linux && amd64

package compare

import (
	"context"
	"fmt"
	"math"
	"time"
)

// calibrate sets each job's two call counts from one quick pair of runs,
// so that the longer run lasts about Budget; a tool failing here is n/a.
func (r *runner) calibrate(ctx context.Context) {
	n := 0
	for _, j := range r.jobs {
		if j.row.Skip == "" {
			n++
		}
	}
	r.all = n * (2 + 2*r.cfg.Repeat)
	for _, j := range r.jobs {
		if j.row.Skip != "" || ctx.Err() != nil {
			continue
		}
		if j.plan != nil && j.plan.Setup != nil {
			j.setupRan = true
			if err := j.plan.Setup(); err != nil {
				j.fail(err)
				continue
			}
		}
		r.status(fmt.Sprintf("calibrating %s, %s", j.row.Tool, j.sc.Name))
		if err := r.calibrateJob(ctx, j); err != nil {
			j.fail(err)
		}
	}
}

// calibrateJob chooses j's two counts from a quick pair of runs, which
// also warm caches up; the user's command without {N} has one warm-up run.
func (r *runner) calibrateJob(ctx context.Context, j *job) error {
	// Never more calls than --events, not even to calibrate.
	lo, hi := 0, min(calibrationCalls, r.cfg.Events)
	switch {
	case j.single:
		_, err := r.run(ctx, j, 0)
		return err
	case j.sc.Attach:
		wt, err := startWaiter(r.cfg.Workload)
		if err != nil {
			return err
		}
		j.wait = wt
		lo, hi = 1, min(calibrationProbes, j.sc.Probes)
	case r.cfg.Calls[1] > 0:
		// Counts given: one warm-up run.
		j.row.Calls = r.cfg.Calls
		_, err := r.run(ctx, j, r.cfg.Calls[0])
		return err
	case r.cfg.Workload.User:
		lo = 1 // a program may refuse a count of 0
	}
	a, err := r.run(ctx, j, lo)
	if err != nil {
		return err
	}
	b, err := r.run(ctx, j, hi)
	if err != nil {
		return err
	}
	// A slow tool's start-up varies by more than a thousand calls cost
	// (bpftrace: ±0.1 s against 40 ms): its slope from them can come out
	// zero, and its rows then got --events calls lasting minutes (two
	// million: timed out). More calls until they cost a tenth of Budget.
	for !j.sc.Attach && b.Wall-a.Wall < r.cfg.Budget/10 && b.Calls < r.cfg.Events {
		r.all++
		if b, err = r.run(ctx, j, min(10*b.Calls, r.cfg.Events)); err != nil {
			return err
		}
	}
	us, _ := Slope(a, b)
	switch {
	case j.sc.Attach:
		j.row.Calls = attachCounts(us, j.sc.Probes, attachBudget*r.cfg.Budget)
	default:
		j.row.Calls = Counts(us, r.cfg.Budget, r.cfg.Events)
	}
	return nil
}

// attachCounts are the probe counts of an attach row: 1 and all of them,
// or as many as a tool costing usPerProbe attaches within budget.
func attachCounts(usPerProbe float64, probes int, budget time.Duration) [2]int {
	n := probes
	if usPerProbe > 0 && float64(budget.Microseconds())/usPerProbe < float64(n) {
		n = max(roundDown(int(float64(budget.Microseconds())/usPerProbe)), calibrationProbes)
	}
	return [2]int{1, n}
}

// Counts picks the two call counts of a row from its estimated cost per
// call: the longer run makes most calls (--events) unless that would last
// longer than budget, when it makes a round number that fits, at least
// 1,000 (or most, if fewer); the shorter makes a fifth of the longer.
func Counts(usPerCall float64, budget time.Duration, most int) [2]int {
	n := most
	if us := math.Max(usPerCall, 0.01); float64(budget.Microseconds())/us < float64(n) {
		n = max(roundDown(int(float64(budget.Microseconds())/us)), min(1000, most))
	}
	return [2]int{n / 5, n}
}

// roundDown keeps the two leading digits of n.
func roundDown(n int) int {
	p := 1
	for n/p >= 100 {
		p *= 10
	}
	return n / p * p
}
