//go:build linux && amd64

package compare

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Utap is utap itself with one engine, run as `utap run` in a process of
// its own like every peer, so rows measure the whole tool.
type Utap struct {
	Exe     string // the utap binary
	Backend string // ptrace or uprobe
	// Dir holds the probe files of the installed-probes rows.
	Dir string
	// NoPads: the ptrace engine with breakpoints only (--no-pads).
	NoPads bool
}

func (u Utap) Name() string {
	if u.NoPads {
		return "utap " + u.Backend + " --no-pads"
	}
	return "utap " + u.Backend
}

// Plan runs `utap run -q --format json -o OUT`: every event is encoded and
// written, the cost a user pays, and the lines of OUT are the count.
func (u Utap) Plan(s Scenario, w *Workload) (*Plan, error) {
	if s.Attach {
		return u.planAttach(s, w)
	}
	fn := w.Target
	var specs []string
	switch {
	case s.Specs != nil:
		specs = s.Specs
	case IsSyscall(s.Mode):
		specs, fn = []string{"syscall:getppid"}, "getppid"
	case s.Mode == ModeUSDT:
		if !w.USDT {
			return nil, errNoSDT
		}
		specs, fn = []string{"usdt:utap:tick"}, "utap:tick"
	case s.Cond == CondFalse:
		specs = []string{fmt.Sprintf("%s(arg1) if arg2 != %d", fn, TargetB)}
	case s.Cond == CondTrue:
		specs = []string{fmt.Sprintf("%s(arg1, arg2) if arg2 == %d", fn, TargetB)}
	case s.Fetch:
		specs = []string{fn + "(arg1, arg2)"}
	default:
		specs = []string{fn}
	}
	if s.Return && !s.Count { // -c adds its own (below)
		specs = append(specs, "return:"+fn+"(ret)")
	}
	// --entry-only: utap adds a return probe beside each entry probe by
	// default (ltrace's one line per call); the scenarios measure entry
	// probes alone.
	args := []string{"run", "--backend", u.Backend, "-q", "--entry-only", "--format", "json"}
	count := func(out, _ string) (int, error) { return countLines(out, nonEmpty) }
	if s.Lines {
		// The default trace: a line per call, entry and return together.
		args = []string{"run", "--backend", u.Backend, "-q"}
		specs = []string{fn + "(arg1, arg2)"}
		count = func(out, _ string) (int, error) { return countLines(out, callLines(fn, true)) }
	}
	if IsSyscall(s.Mode) {
		// One line per call, besides the process's exit line.
		count = func(out, _ string) (int, error) {
			return countLines(out, func(l string) int {
				if strings.Contains(l, `"func":"getppid"`) {
					return 1
				}
				return 0
			})
		}
	}
	if s.Count {
		// --count-only counts in the engine and writes one JSON summary at
		// exit; -c times each call too (its return probe, added by utap).
		flag := "--count-only"
		if s.Return {
			flag = "-c"
		}
		args = []string{"run", "--backend", u.Backend, "-q", flag, "--format", "json"}
		count = func(out, _ string) (int, error) { return utapSummaryCalls(out, fn) }
	}
	if u.NoPads {
		args = append(args, "--no-pads")
	}
	switch {
	case s.Specs != nil && len(specs) > maxInline:
		file := filepath.Join(u.Dir, "user-probes.txt")
		if err := os.WriteFile(file, []byte(strings.Join(specs, "\n")+"\n"), 0o644); err != nil {
			return nil, err
		}
		args = append(args, "--probes", file)
	case s.Specs == nil && s.Probes > 1:
		file, err := u.probesFile(s.Probes, specs, w)
		if err != nil {
			return nil, err
		}
		args = append(args, "--probes", file)
	default:
		for _, sp := range specs {
			args = append(args, "-e", sp)
		}
	}
	return &Plan{
		Argv: func(wl []string, out string) []string {
			argv := append([]string{u.Exe}, args...)
			return append(append(argv, "-o", out, "--"), wl...)
		},
		// Idle probes never fire, so every line is the target's (or getppid's).
		Count: count,
	}, nil
}

// maxInline is how many of the user's specs go on the command line as -e;
// more go to a probes file.
const maxInline = 8

// probesFile writes the specs and then never-called functions, n probes
// in all, to a probes file in Dir.
func (u Utap) probesFile(n int, specs []string, w *Workload) (string, error) {
	if len(w.Idle) < n-len(specs) {
		return "", notApplicable("the workload has %d never-called functions, %d needed", len(w.Idle), n-len(specs))
	}
	file := filepath.Join(u.Dir, fmt.Sprintf("probes-%d.txt", n))
	lines := append(append([]string{}, specs...), w.Idle[:n-len(specs)]...)
	return file, os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}

// planAttach runs `utap attach --duration 1ms`: the engines install every
// probe before they look at the deadline, so the run is start-up,
// resolving, attaching and detaching.
func (u Utap) planAttach(s Scenario, w *Workload) (*Plan, error) {
	if len(w.Idle) < s.Probes-1 {
		return nil, notApplicable("the workload has %d never-called functions, %d needed", len(w.Idle), s.Probes-1)
	}
	return &Plan{
		Attach: func(pid string, probes int, out string) []string {
			// A failed write shows as utap's own error in the row.
			file, _ := u.probesFile(probes, []string{w.Target}, w)
			return []string{u.Exe, "attach", "--backend", u.Backend, "-q", "--entry-only", "--format", "json",
				"-p", pid, "--probes", file, "--duration", "1ms", "-o", out}
		},
		Count: func(out, _ string) (int, error) { return countLines(out, nonEmpty) },
	}, nil
}
