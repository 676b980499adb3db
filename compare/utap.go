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
}

func (u Utap) Name() string { return "utap " + u.Backend }

// Plan runs `utap run -q --format json -o OUT`: every event is encoded and
// written, the cost a user pays, and the lines of OUT are the count.
func (u Utap) Plan(s Scenario, w *Workload) (*Plan, error) {
	fn := w.Target
	var specs []string
	switch {
	case s.Mode == ModeSyscall:
		if !w.Libc {
			return nil, notApplicable("the Go workload makes its system calls without libc")
		}
		specs = []string{"libc:getppid"}
	case s.Cond == CondFalse:
		specs = []string{fmt.Sprintf("%s(arg1) if arg2 != %d", fn, TargetB)}
	case s.Cond == CondTrue:
		specs = []string{fmt.Sprintf("%s(arg1, arg2) if arg2 == %d", fn, TargetB)}
	case s.Fetch:
		specs = []string{fn + "(arg1, arg2)"}
	default:
		specs = []string{fn}
	}
	if s.Return {
		specs = append(specs, "return:"+fn+"(ret)")
	}
	args := []string{"run", "--backend", u.Backend, "-q", "--format", "json"}
	if s.Probes > 1 {
		if len(w.Idle) < s.Probes-1 {
			return nil, notApplicable("the workload has %d never-called functions, %d needed", len(w.Idle), s.Probes-1)
		}
		file := filepath.Join(u.Dir, fmt.Sprintf("probes-%d.txt", s.Probes))
		lines := append(append([]string{}, specs...), w.Idle[:s.Probes-1]...)
		if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			return nil, err
		}
		args = append(args, "--probes", file)
	} else {
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
		Count: func(out, _ string) (int, error) { return countLines(out, nonEmpty) },
	}, nil
}
