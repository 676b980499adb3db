//go:build linux && amd64

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"
	"github.com/utap/utap/compare"
)

func compareCommand() *cli.Command {
	return &cli.Command{
		Name:      "compare",
		Usage:     "measure the cost of one traced call for utap's engines and the tracers on PATH",
		ArgsUsage: "[-e SPEC... --expect COUNT -- CMD [ARGS... {N} ...]]",
		Description: "Runs a built-in workload (a C program built with gcc when there is one, else utap's own\n" +
			"   Go workload) untraced and under each tool at two call counts, N/5 and N = --events (a tool too\n" +
			"   slow for N calls within --budget makes fewer; the calls column shows what ran); the slope is\n" +
			"   the cost per call with start-up cancelled. A cost within the noise of zero shows as <bound,\n" +
			"   never negative, and its scenario gets no ratios. Rows: utap ptrace, utap uprobe, and ltrace,\n" +
			"   gdb, strace, bpftrace, perf when found. A tool that drops events is flagged, not ranked.\n" +
			"   It takes a few minutes.\n" +
			"   utap compare --scenario entry,fetch --format markdown --svg overhead.svg\n\n" +
			"   Or your own command with your probes: {N} in its arguments is the count, run at two values,\n" +
			"   and --expect says how many events a run reports (a count, or in N: N, 2*N+1). The peers\n" +
			"   trace the same function entries where the spec translates (else their row says why).\n" +
			"   utap compare -e 'work(arg1)' --expect N -- ./myprog {N}\n" +
			"   Without {N} the command runs as given, and start-up is part of the cost per event.\n\n" +
			"   --runs 3 repeats the whole measurement and flags rows whose medians spread beyond ±15%;\n" +
			"   --merge a.json,b.json does the same with reports saved by --format json.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "scenario", Value: "all", Usage: "`S,...`: entry, count, fetch, summary, return, calls, cond-false, cond-true, syscall, syscall-mix, syscall-untraced, usdt, threads, probes, attach, all"},
			&cli.IntFlag{Name: "events", Value: compare.DefaultEvents, Usage: "`N` calls in a row's longer run, N/5 in its shorter; never more, fewer for a tool too slow for --budget"},
			&cli.IntFlag{Name: "threads", Value: 1, Usage: "`T` workload threads in the non-scaling scenarios"},
			&cli.IntFlag{Name: "repeat", Value: compare.DefaultRepeat, Usage: "`R` interleaved repetitions"},
			&cli.IntFlag{Name: "runs", Value: 1, Usage: "repeat the whole measurement `K` times and check the medians agree within ±15%"},
			&cli.DurationFlag{Name: "budget", Value: compare.DefaultBudget, Usage: "wanted length `D` of a tool's longer run"},
			&cli.StringFlag{Name: "backends", Value: "ptrace,uprobe", Usage: "utap engines to measure (ptrace, ptrace-int3: ptrace --no-pads, uprobe), or none"},
			&cli.StringFlag{Name: "peers", Value: "auto", Usage: "auto (those on PATH), none, or `LIST` of ltrace,gdb,strace,bpftrace,perf"},
			&cli.StringFlag{Name: "workload", Value: "auto", Usage: "c (built with gcc), go (utap __workload) or auto"},
			&cli.StringSliceFlag{Name: "e", Usage: "probe `SPEC` for your command (repeatable)"},
			&cli.StringFlag{Name: "probes", Usage: "read your command's specs from `FILE`, one a line"},
			&cli.StringFlag{Name: "expect", Usage: "events one run of your command reports: `COUNT`, or in N (N, 2*N+1)"},
			&cli.StringFlag{Name: "n", Usage: "the two values `LO,HI` of {N} (default: --events/5 and --events, fewer for a slow tool)"},
			&cli.StringFlag{Name: "merge", Usage: "merge JSON reports `A,B,...` of separate runs instead of measuring"},
			&cli.StringFlag{Name: "format", Value: "text", Usage: "text, json or markdown"},
			&cli.StringFlag{Name: "svg", Usage: "also draw a bar chart to `FILE`"},
			&cli.BoolFlag{Name: "q", Usage: "quiet: no progress line on stderr"},
		},
		Action: runCompare,
	}
}

func runCompare(c *cli.Context) error {
	var rep *compare.Report
	var err error
	if files := c.String("merge"); files != "" {
		rep, err = mergeFiles(strings.Split(files, ","))
	} else {
		rep, err = measure(c)
	}
	if err != nil {
		return err
	}
	if err := compare.Write(os.Stdout, rep, c.String("format")); err != nil {
		return err
	}
	if file := c.String("svg"); file != "" {
		f, err := os.Create(file)
		if err != nil {
			return fmt.Errorf("--svg: %w", err)
		}
		defer f.Close()
		if err := compare.WriteSVG(f, rep); err != nil {
			return fmt.Errorf("--svg: %w", err)
		}
	}
	return nil
}

// measure runs the comparison --runs times and merges the runs.
func measure(c *cli.Context) (*compare.Report, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "utap-compare-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)

	var w *compare.Workload
	var scenarios []compare.Scenario
	if c.Args().Len() > 0 {
		w, scenarios, err = userWorkload(c)
	} else {
		w, scenarios, err = builtinWorkload(c, exe)
	}
	if err != nil {
		return nil, err
	}
	var tools []compare.Tool
	if b := c.String("backends"); b != "none" {
		for _, name := range strings.Split(b, ",") {
			switch name {
			case "ptrace", "uprobe":
				tools = append(tools, compare.Utap{Exe: exe, Backend: name, Dir: dir})
			case "ptrace-int3":
				tools = append(tools, compare.Utap{Exe: exe, Backend: "ptrace", Dir: dir, NoPads: true})
			default:
				return nil, fmt.Errorf("--backends: unknown engine %q (use ptrace, ptrace-int3, uprobe or none)", name)
			}
		}
	}
	peers, err := compare.SelectPeers(c.String("peers"))
	if err != nil {
		return nil, err
	}
	tools = append(tools, peers...)

	cfg := compare.Config{
		Workload: w, Tools: tools, Scenarios: scenarios,
		Events: c.Int("events"), Repeat: c.Int("repeat"), Budget: c.Duration("budget"), Dir: dir,
	}
	if cfg.Calls, err = parseCounts(c.String("n")); err != nil {
		return nil, err
	}
	if hi := cfg.Calls[1]; c.IsSet("events") && hi > cfg.Events {
		return nil, fmt.Errorf("--n %d,%d runs more than --events %d: raise --events or drop it", cfg.Calls[0], hi, cfg.Events)
	}
	if !c.Bool("q") {
		cfg.Progress = os.Stderr
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	runs := max(1, c.Int("runs"))
	var reps []*compare.Report
	for i := range runs {
		if runs > 1 && cfg.Progress != nil {
			cfg.Prefix = fmt.Sprintf("run %d/%d: ", i+1, runs)
		}
		rep, err := compare.Run(ctx, cfg)
		if err != nil {
			return nil, err
		}
		reps = append(reps, rep)
	}
	rep := reps[0]
	if runs > 1 {
		if rep, err = compare.Merge(reps); err != nil {
			return nil, err
		}
	}
	rep.Command = "utap " + compare.ShellJoin(os.Args[1:])
	rep.Machine = machine()
	return rep, nil
}

// builtinWorkload is the built-in workload and the --scenario scenarios.
func builtinWorkload(c *cli.Context, exe string) (*compare.Workload, []compare.Scenario, error) {
	for _, f := range []string{"e", "probes", "expect"} {
		if c.IsSet(f) {
			return nil, nil, fmt.Errorf("-%s is for your own command: utap compare -e SPEC --expect COUNT -- CMD", f)
		}
	}
	scenarios, err := compare.SelectScenarios(strings.Split(c.String("scenario"), ","))
	if err != nil {
		return nil, nil, err
	}
	for i := range scenarios {
		if !scenarios[i].Scaling {
			scenarios[i].Threads = max(1, c.Int("threads"))
		}
	}
	w, err := chooseWorkload(c.String("workload"), exe)
	return w, scenarios, err
}

// userWorkload is the command after -- with the -e/--probes specs.
func userWorkload(c *cli.Context) (*compare.Workload, []compare.Scenario, error) {
	if c.IsSet("scenario") || c.IsSet("workload") {
		return nil, nil, fmt.Errorf("--scenario and --workload choose the built-in workload, not your command")
	}
	specs, err := readSpecs(c, &eventFilter{}, false)
	if err != nil {
		return nil, nil, err
	}
	var texts []string
	for _, s := range specs {
		texts = append(texts, s.Text)
	}
	if !c.IsSet("expect") {
		return nil, nil, fmt.Errorf("your command needs --expect: how many events one run reports (a count, or in N: N, 2*N+1)")
	}
	expect, err := compare.ParseExpect(c.String("expect"))
	if err != nil {
		return nil, nil, err
	}
	w, err := compare.UserWorkload(c.Args().Slice())
	if err != nil {
		return nil, nil, err
	}
	sc, err := compare.UserScenario(texts, expect, w)
	if err != nil {
		return nil, nil, err
	}
	return w, []compare.Scenario{sc}, nil
}

// parseCounts reads --n LO,HI.
func parseCounts(s string) ([2]int, error) {
	var n [2]int
	if s == "" {
		return n, nil
	}
	lo, hi, ok := strings.Cut(s, ",")
	a, err1 := strconv.Atoi(strings.TrimSpace(lo))
	b, err2 := strconv.Atoi(strings.TrimSpace(hi))
	if !ok || err1 != nil || err2 != nil || a < 0 || b <= a {
		return n, fmt.Errorf("--n %q: want two counts LO,HI with LO < HI", s)
	}
	return [2]int{a, b}, nil
}

// mergeFiles reads reports saved with --format json and merges them.
func mergeFiles(files []string) (*compare.Report, error) {
	var reps []*compare.Report
	for _, f := range files {
		b, err := os.ReadFile(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("--merge: %w", err)
		}
		var r compare.Report
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("--merge %s: %w", f, err)
		}
		reps = append(reps, &r)
	}
	return compare.Merge(reps)
}

// chooseWorkload builds the C workload when a compiler is there (every
// peer can trace it), else uses utap's own Go workload.
func chooseWorkload(name, exe string) (*compare.Workload, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	cache = filepath.Join(cache, "utap", "compare")
	switch name {
	case "go":
		return compare.GoWorkload(exe), nil
	case "c", "auto":
		for _, cc := range []string{"gcc", "cc", "clang"} {
			if _, err := exec.LookPath(cc); err == nil {
				return compare.BuildC(cc, cache)
			}
		}
		if name == "c" {
			return nil, fmt.Errorf("--workload c: no C compiler (gcc, cc, clang) on PATH")
		}
		return compare.GoWorkload(exe), nil
	}
	return nil, fmt.Errorf("unknown --workload %q (use auto, c or go)", name)
}

// machine describes the machine for the report: kernel and CPUs.
func machine() string {
	var u syscall.Utsname
	if err := syscall.Uname(&u); err != nil {
		return fmt.Sprintf("%d CPUs", runtime.NumCPU())
	}
	str := func(b [65]int8) string {
		var s []byte
		for _, c := range b {
			if c == 0 {
				break
			}
			s = append(s, byte(c))
		}
		return string(s)
	}
	m := fmt.Sprintf("%s %s %s, %d CPUs", str(u.Sysname), str(u.Release), str(u.Machine), runtime.NumCPU())
	// A busy machine spreads every row: say how busy it was.
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) >= 3 {
			m += fmt.Sprintf(", load average %s %s %s when done", f[0], f[1], f[2])
		}
	}
	return m
}
