package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"
	"github.com/utap/utap/compare"
)

func compareCommand() *cli.Command {
	return &cli.Command{
		Name:  "compare",
		Usage: "measure the cost of one traced call for utap's engines and the tracers on PATH",
		Description: "Runs a built-in workload (a C program built with gcc when there is one, else utap's own\n" +
			"   Go workload) untraced and under each tool at two call counts; the slope is the cost per call\n" +
			"   with start-up cancelled. Rows: utap ptrace, utap uprobe, and ltrace, gdb, strace, bpftrace,\n" +
			"   perf when found. A tool that drops events is flagged, not ranked. It takes a few minutes.\n" +
			"   utap compare --scenario entry,fetch --format markdown --svg overhead.svg",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "scenario", Value: "all", Usage: "`S,...`: entry, fetch, return, cond-false, cond-true, syscall, threads, probes, all"},
			&cli.IntFlag{Name: "events", Value: compare.DefaultEvents, Usage: "at most `N` calls in a run (slow tools make fewer)"},
			&cli.IntFlag{Name: "threads", Value: 1, Usage: "`T` workload threads in the non-scaling scenarios"},
			&cli.IntFlag{Name: "repeat", Value: compare.DefaultRepeat, Usage: "`R` interleaved repetitions"},
			&cli.DurationFlag{Name: "budget", Value: compare.DefaultBudget, Usage: "wanted length `D` of a tool's longer run"},
			&cli.StringFlag{Name: "backends", Value: "ptrace,uprobe", Usage: "utap engines to measure, or none"},
			&cli.StringFlag{Name: "peers", Value: "auto", Usage: "auto (those on PATH), none, or `LIST` of ltrace,gdb,strace,bpftrace,perf"},
			&cli.StringFlag{Name: "workload", Value: "auto", Usage: "c (built with gcc), go (utap __workload) or auto"},
			&cli.StringFlag{Name: "format", Value: "text", Usage: "text, json or markdown"},
			&cli.StringFlag{Name: "svg", Usage: "also draw a bar chart to `FILE`"},
			&cli.BoolFlag{Name: "q", Usage: "quiet: no progress line on stderr"},
		},
		Action: runCompare,
	}
}

func runCompare(c *cli.Context) error {
	if c.Args().Len() > 0 {
		return fmt.Errorf("compare runs its own workload; tracing your own command (-- CMD) is not supported yet")
	}
	scenarios, err := compare.SelectScenarios(strings.Split(c.String("scenario"), ","))
	if err != nil {
		return err
	}
	for i := range scenarios {
		if !scenarios[i].Scaling {
			scenarios[i].Threads = max(1, c.Int("threads"))
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "utap-compare-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	w, err := chooseWorkload(c.String("workload"), exe)
	if err != nil {
		return err
	}
	var tools []compare.Tool
	if b := c.String("backends"); b != "none" {
		for _, name := range strings.Split(b, ",") {
			if name != "ptrace" && name != "uprobe" {
				return fmt.Errorf("--backends: unknown engine %q (use ptrace, uprobe or none)", name)
			}
			tools = append(tools, compare.Utap{Exe: exe, Backend: name, Dir: dir})
		}
	}
	peers, err := compare.SelectPeers(c.String("peers"))
	if err != nil {
		return err
	}
	tools = append(tools, peers...)

	cfg := compare.Config{
		Workload: w, Tools: tools, Scenarios: scenarios,
		Events: c.Int("events"), Repeat: c.Int("repeat"), Budget: c.Duration("budget"), Dir: dir,
	}
	if !c.Bool("q") {
		cfg.Progress = os.Stderr
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := compare.Run(ctx, cfg)
	if err != nil {
		return err
	}
	rep.Command = "utap " + strings.Join(os.Args[1:], " ")
	rep.Machine = machine()
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
	return fmt.Sprintf("%s %s %s, %d CPUs", str(u.Sysname), str(u.Release), str(u.Machine), runtime.NumCPU())
}
