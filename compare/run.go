//go:build linux && amd64

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
	"syscall"
	"time"

	"golang.org/x/sys/unix"
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

	// Calls, when set, are the two call counts of every row (the user's
	// {N}), instead of counts calibrated to Budget.
	Calls [2]int

	Dir string // scratch directory: event files, probe lists
	// Progress gets the status: one line redrawn in place on a terminal,
	// else a plain line per step, no escapes; nil for quiet.
	Progress io.Writer
	Prefix   string // starts the status line (which of several runs)
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

// Attach rows: calibrationProbes probes estimate a tool's cost per probe;
// a tool too slow to attach all the scenario's probes within
// attachBudget × Budget attaches fewer, and its row says so.
const (
	calibrationProbes = 20
	attachBudget      = 10
	// attachTries runs of each count make one sample, the quickest kept:
	// attaching takes well under a second.
	attachTries = 3
)

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

	single bool      // the user's command without {N}: one run per repetition
	walls  []float64 // single: each repetition's wall time, µs
	wait   *waiter   // attach rows: the process attached to
	broken error     // attach rows: the process misbehaved after detach
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
	r := &runner{cfg: cfg, terminal: isTerminal(cfg.Progress)}
	defer r.cleanup()
	if err := r.plan(); err != nil {
		return nil, err
	}
	r.calibrate(ctx)
	r.measure(ctx)
	r.finishWaiters(ctx)
	r.status("")
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rep := &Report{Workload: cfg.Workload.Name, Repeat: cfg.Repeat, Runs: 1, Date: time.Now().UTC().Truncate(time.Second)}
	if cfg.Workload.User {
		rep.Unit = "event"
	}
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
	terminal  bool // Progress is a terminal: redraw one line
}

// plan makes a job per scenario and tool, the untraced baseline first.
func (r *runner) plan() error {
	w := r.cfg.Workload
	single := w.Single && w.User
	mode := ""
	if single {
		mode = ModeTotal
	}
	for _, sc := range r.cfg.Scenarios {
		var base *job
		if !sc.Attach {
			base = &job{sc: sc, single: single, row: Row{Tool: "untraced", Scenario: sc.Name, Baseline: true, Mode: mode}}
			base.row.Command = r.shown(sc, nil)
			r.jobs = append(r.jobs, base)
		}
		first := len(r.jobs)
		for _, t := range r.cfg.Tools {
			p, err := t.Plan(sc, w)
			if p == nil && err == nil {
				continue
			}
			j := &job{sc: sc, plan: p, base: base, single: single, row: Row{Tool: t.Name(), Scenario: sc.Name, Mode: mode}}
			if sc.Attach {
				j.row.Mode = ModeAttach
			}
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
		if len(r.jobs) == first && base != nil {
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
	switch {
	case p != nil && p.Attach != nil:
		argv = p.Attach("PID", sc.Probes, "OUT")
	case p != nil:
		argv = p.Argv(argv, "OUT")
		prefix = p.Shown
	}
	for i, a := range argv {
		if !w.User {
			a = strings.ReplaceAll(a, w.Exe, "BIN")
		}
		// bpftrace's list of a thousand probes
		if len(a) > 300 {
			a = a[:200] + fmt.Sprintf("…(%d bytes)", len(a))
		}
		argv[i] = a
	}
	s := prefix + shellJoin(argv)
	if !w.User {
		s = strings.ReplaceAll(s, w.Exe, "BIN")
	}
	s = strings.ReplaceAll(s, r.cfg.Dir, "DIR")
	if exe, err := os.Executable(); err == nil {
		s = strings.ReplaceAll(s, exe, "utap")
	}
	return s
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
			if j.single {
				s, err := r.run(ctx, j, 0)
				if err != nil {
					j.fail(err)
					continue
				}
				j.walls = append(j.walls, float64(s.Wall)/float64(time.Microsecond))
				continue
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
	switch {
	case sc.Attach:
		argv = j.plan.Attach(strconv.Itoa(j.wait.pid()), calls, events)
	case j.plan != nil:
		argv = j.plan.Argv(argv, events)
	}
	r.done++
	r.status("")
	tries := 1
	if sc.Attach {
		tries = attachTries
	}
	wall := time.Duration(math.MaxInt64)
	for range tries {
		// Noise only adds to a run's time: the quickest try is the truest.
		w, err := runOnce(ctx, r.cfg.Dir, argv, r.cfg.Timeout)
		if err != nil {
			return Sample{}, err
		}
		wall = min(wall, w)
		if sc.Attach {
			r.checkWaiter(j)
		}
		if w > time.Second {
			break // a slow tool's noise is small beside its cost
		}
	}
	stdout := filepath.Join(r.cfg.Dir, "stdout")
	want := Checksum(calls)
	if IsSyscall(sc.Mode) {
		want = int64(calls)
	}
	if !w.User && !sc.Attach {
		if err := checkOutput(stdout, want); err != nil {
			return Sample{}, err
		}
	}
	s := Sample{Calls: calls, Wall: wall}
	expected := sc.Expected(calls)
	var err error
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

// checkWaiter flags the row of a tool that left its process stopped or
// traced, and wakes the process so the next runs measure the same thing.
func (r *runner) checkWaiter(j *job) {
	if err := j.wait.check(); err != nil {
		if j.broken == nil {
			j.broken = err
		}
		syscall.Kill(j.wait.pid(), syscall.SIGCONT)
	}
}

// finishWaiters lets every attach row's process run on and flags the rows
// whose process misbehaved.
func (r *runner) finishWaiters(ctx context.Context) {
	for _, j := range r.jobs {
		if j.wait == nil {
			continue
		}
		if ctx.Err() != nil || j.failed != nil {
			j.wait.kill()
			continue
		}
		if err := j.wait.finish(10 * time.Second); j.broken == nil {
			j.broken = err
		}
	}
}

// status shows msg as the progress; an empty msg clears a terminal's
// line once every run is done.
func (r *runner) status(msg string) {
	if r.cfg.Progress == nil {
		return
	}
	if !r.terminal {
		// A log or a pipe: plain lines, nothing to redraw.
		if msg != "" {
			fmt.Fprintf(r.cfg.Progress, "utap compare: %srun %d/%d: %s\n", r.cfg.Prefix, r.done, r.all, msg)
		}
		return
	}
	if msg == "" && r.done >= r.all {
		fmt.Fprint(r.cfg.Progress, "\r\033[K")
		return
	}
	if msg != "" {
		fmt.Fprintf(r.cfg.Progress, "\r\033[Kutap compare: %srun %d/%d: %s", r.cfg.Prefix, r.done, r.all, msg)
	}
}

// isTerminal reports whether w is a terminal, the one place where
// progress may redraw its line with \r and escapes.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

func (r *runner) cleanup() {
	for _, j := range r.jobs {
		if j.wait != nil {
			j.wait.kill()
		}
		if j.setupRan && j.plan.Cleanup != nil {
			j.plan.Cleanup()
		}
	}
}
