package compare

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Config says what Run measures.
type Config struct {
	Workload  *Workload
	Tools     []Tool // utap engines, then peers, in report order
	Scenarios []Scenario

	Events int           // the most calls a run makes
	Repeat int           // repetitions, interleaved across rows
	Budget time.Duration // wanted length of a tool's longer run, so slow tools make fewer calls
	// Timeout bounds one run; 0 means 30 × Budget, at least a minute.
	Timeout time.Duration

	Dir      string    // scratch directory: event files, probe lists
	Progress io.Writer // one updating status line; nil for quiet
}

// Defaults for the CLI flags.
const (
	DefaultEvents = 200000
	DefaultRepeat = 3
	DefaultBudget = 1500 * time.Millisecond
)

// calibrationCalls is the call count of the quick run that estimates a
// tool's cost before its counts are chosen.
const calibrationCalls = 1000

// job is one row being measured.
type job struct {
	row      Row
	sc       Scenario
	plan     *Plan // nil: the untraced baseline
	base     *job  // the scenario's baseline
	reps     [][2]Sample
	worst    int // largest |seen - expected| so far
	failed   error
	setupRan bool
}

// Run measures every tool on every scenario and returns the report (rows
// that could not run carry Skip).
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if cfg.Workload == nil || cfg.Events < 10 || cfg.Repeat < 1 {
		return nil, fmt.Errorf("compare: need a workload, events >= 10 and repeat >= 1")
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = max(time.Minute, 30*cfg.Budget)
	}
	r := &runner{cfg: cfg}
	defer r.cleanup()
	if err := r.plan(); err != nil {
		return nil, err
	}
	r.calibrate(ctx)
	r.measure(ctx)
	r.status("")
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rep := &Report{Workload: cfg.Workload.Name, Repeat: cfg.Repeat, Date: time.Now().UTC().Truncate(time.Second)}
	for _, j := range r.jobs {
		rep.Rows = append(rep.Rows, j.result())
	}
	Rank(rep.Rows)
	return rep, nil
}

type runner struct {
	cfg       Config
	jobs      []*job
	done, all int
}

// plan makes a job per scenario and tool, the untraced baseline first.
func (r *runner) plan() error {
	w := r.cfg.Workload
	for _, sc := range r.cfg.Scenarios {
		base := &job{sc: sc, row: Row{Tool: "untraced", Scenario: sc.Name, Baseline: true}}
		base.row.Command = r.shown(sc, nil)
		r.jobs = append(r.jobs, base)
		first := len(r.jobs)
		for _, t := range r.cfg.Tools {
			p, err := t.Plan(sc, w)
			if p == nil && err == nil {
				continue
			}
			j := &job{sc: sc, plan: p, base: base, row: Row{Tool: t.Name(), Scenario: sc.Name}}
			switch {
			case errors.Is(err, ErrNotApplicable):
				j.row.Skip = strings.TrimPrefix(err.Error(), ErrNotApplicable.Error()+": ")
			case err != nil:
				return fmt.Errorf("%s, %s: %w", t.Name(), sc.Name, err)
			default:
				j.row.Command = r.shown(sc, p)
			}
			r.jobs = append(r.jobs, j)
		}
		if len(r.jobs) == first {
			// No tool takes part (scaling rows without utap): no baseline either.
			r.jobs = r.jobs[:first-1]
		}
	}
	return nil
}

// shown is a row's command line with BIN, OUT and N for the workload, the
// event file and the call count, DIR for the scratch directory.
func (r *runner) shown(sc Scenario, p *Plan) string {
	w := r.cfg.Workload
	argv := w.argv("N", sc.Threads, sc.Mode)
	prefix := ""
	if p != nil {
		argv = p.Argv(argv, "OUT")
		prefix = p.Shown
	}
	s := strings.ReplaceAll(prefix+shellJoin(argv), w.Exe, "BIN")
	s = strings.ReplaceAll(s, r.cfg.Dir, "DIR")
	if exe, err := os.Executable(); err == nil {
		s = strings.ReplaceAll(s, exe, "utap")
	}
	return s
}

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
		a, err := r.run(ctx, j, 0)
		if err != nil {
			j.fail(err)
			continue
		}
		b, err := r.run(ctx, j, calibrationCalls)
		if err != nil {
			j.fail(err)
			continue
		}
		us, _ := Slope(a, b)
		j.row.Calls = Counts(us, r.cfg.Budget, r.cfg.Events)
	}
}

// Counts picks the two call counts of a row from its estimated cost per
// call: the longer run lasts about budget and makes at most most calls,
// the shorter makes a fifth of that; both are round numbers.
func Counts(usPerCall float64, budget time.Duration, most int) [2]int {
	n := most
	if us := math.Max(usPerCall, 0.01); float64(budget.Microseconds())/us < float64(n) {
		n = int(float64(budget.Microseconds()) / us)
	}
	n = max(roundDown(n), 1000)
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

// measure runs every job Repeat times at both counts, all jobs in each
// repetition so drift in the machine spreads over every row alike; the
// order of the counts alternates between repetitions.
func (r *runner) measure(ctx context.Context) {
	for rep := 0; rep < r.cfg.Repeat; rep++ {
		for _, j := range r.jobs {
			if j.row.Skip != "" || ctx.Err() != nil {
				continue
			}
			r.status(fmt.Sprintf("%s, %s (N=%d, %d) repetition %d/%d", j.row.Tool, j.sc.Name, j.row.Calls[0], j.row.Calls[1], rep+1, r.cfg.Repeat))
			order := []int{0, 1}
			if rep%2 == 1 {
				order = []int{1, 0}
			}
			var pair [2]Sample
			var err error
			for _, k := range order {
				if pair[k], err = r.run(ctx, j, j.row.Calls[k]); err != nil {
					break
				}
			}
			if err != nil {
				j.fail(err)
				continue
			}
			j.reps = append(j.reps, pair)
		}
	}
}

// run runs job j's command once with calls calls and checks what it did.
func (r *runner) run(ctx context.Context, j *job, calls int) (Sample, error) {
	w, sc := r.cfg.Workload, j.sc
	argv := w.argv(strconv.Itoa(calls), sc.Threads, sc.Mode)
	events := filepath.Join(r.cfg.Dir, "events")
	if j.plan != nil {
		argv = j.plan.Argv(argv, events)
	}
	r.done++
	r.status("")
	wall, err := runOnce(ctx, r.cfg.Dir, argv, r.cfg.Timeout)
	if err != nil {
		return Sample{}, err
	}
	stdout := filepath.Join(r.cfg.Dir, "stdout")
	want := Checksum(calls)
	if sc.Mode == ModeSyscall {
		want = int64(calls)
	}
	if err := checkOutput(stdout, want); err != nil {
		return Sample{}, err
	}
	s := Sample{Calls: calls, Wall: wall}
	expected := calls * sc.EventsPerCall()
	if j.plan == nil {
		s.Seen = expected
	} else if s.Seen, err = j.plan.Count(events, stdout); err != nil {
		return Sample{}, fmt.Errorf("counting events: %w", err)
	}
	// The row shows its worst run, or its largest when all were exact.
	if d := abs(s.Seen - expected); d > j.worst || d == j.worst && expected >= j.row.Expected {
		j.worst, j.row.Seen, j.row.Expected = d, s.Seen, expected
	}
	return s, nil
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func (j *job) fail(err error) {
	if j.row.Skip == "" {
		j.row.Skip = err.Error()
	}
	j.failed = err
}

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
	us, ms := j.slopes()
	if j.base != nil {
		bus, bms := j.base.slopes()
		if len(bus) > 0 {
			du, dm := Median(bus), Median(bms)
			for i := range us {
				us[i] -= du
				ms[i] -= dm
			}
		}
	}
	row.PerEvent = Summarize(us)
	row.Startup = Median(ms)
	if math.IsNaN(row.Startup) {
		row.Startup = 0
	}
	row.Flag = CheckEvents(row.Seen, row.Expected)
	return row
}

func (r *runner) status(msg string) {
	if r.cfg.Progress == nil {
		return
	}
	if msg == "" && r.done >= r.all {
		fmt.Fprint(r.cfg.Progress, "\r\033[K")
		return
	}
	if msg != "" {
		fmt.Fprintf(r.cfg.Progress, "\r\033[Kutap compare: run %d/%d: %s", r.done, r.all, msg)
	}
}

func (r *runner) cleanup() {
	for _, j := range r.jobs {
		if j.setupRan && j.plan.Cleanup != nil {
			j.plan.Cleanup()
		}
	}
}
