//go:build linux && amd64

package compare

import (
	"fmt"
	"strings"
)

// gdb traces with dprintf breakpoints in batch mode: a debugger used as a
// tracer, the slow end of the uprobes paper's table.
type gdb struct{}

func (gdb) Name() string { return "gdb" }

func (gdb) Plan(s Scenario, w *Workload) (*Plan, error) {
	if err := noUSDT(s); err != nil {
		return nil, err
	}
	if s.Scaling {
		return nil, nil
	}
	if _, err := lookPath("gdb"); err != nil {
		return nil, err
	}
	ex := []string{"set pagination off", "set confirm off", "set startup-with-shell off", "set breakpoint pending on",
		"set print thread-events off", "set print inferior-events off"}
	if s.Specs != nil {
		return userGdb(s, w, ex)
	}
	fn := w.Target
	if IsSyscall(s.Mode) {
		fn = "getppid"
	}
	if s.Count && s.Return {
		return nil, notApplicable("gdb times no calls")
	}
	if s.Count {
		return gdbCount(fn, ex), nil
	}
	entry := `"E\n"`
	if s.Fetch {
		entry = fmt.Sprintf(`"E %%ld %%ld\n",%s,%s`, gdbReg(w.Regs[0]), gdbReg(w.Regs[1]))
	}
	ex = append(ex, "dprintf "+fn+","+entry)
	switch s.Cond {
	case CondFalse:
		ex = append(ex, fmt.Sprintf("condition 1 %s != %d", gdbReg(w.Regs[1]), TargetB))
	case CondTrue:
		ex = append(ex, fmt.Sprintf("condition 1 %s == %d", gdbReg(w.Regs[1]), TargetB))
	}
	if s.Return {
		// A dprintf on each RET: gdb has no return probe that keeps running.
		rets, err := retOffsets(w.Exe, fn)
		if err != nil {
			return nil, notApplicable("no return sites for gdb: %v", err)
		}
		for _, off := range rets {
			ex = append(ex, fmt.Sprintf(`dprintf *%s+%d,"R %%ld\n",%s`, fn, off, gdbReg(w.Ret)))
		}
	}
	ex = append(ex, "run")
	return &Plan{
		Argv: gdbArgv(ex),
		// dprintf writes to gdb's standard output, next to the workload's.
		Count: func(_, stdout string) (int, error) {
			return countLines(stdout, func(l string) int {
				if strings.HasPrefix(l, "E") && (l == "E" || l[1] == ' ') || strings.HasPrefix(l, "R ") {
					return 1
				}
				return 0
			})
		},
	}, nil
}

// gdbReg turns a bpftrace register name (di, ax) into gdb's ($rdi, $rax).
func gdbReg(r string) string { return "$r" + r }

// gdbArgv runs the workload under gdb in batch mode with the commands ex.
func gdbArgv(ex []string) func(wl []string, _ string) []string {
	return func(wl []string, _ string) []string {
		argv := []string{"gdb", "-batch", "-nx", "-q"}
		for _, e := range ex {
			argv = append(argv, "-ex", e)
		}
		return append(append(argv, "--args"), wl...)
	}
}

// gdbCount counts with a breakpoint gdb is told to pass over ~2^31 times:
// each hit still stops the tracee and gdb counts it, but no command runs
// and nothing is printed until `info breakpoints` after the run.
func gdbCount(fn string, ex []string) *Plan {
	ex = append(ex, "break "+fn, "ignore $bpnum 2000000000", "run", "info breakpoints")
	return &Plan{
		Argv:  gdbArgv(ex),
		Count: func(_, stdout string) (int, error) { return countLines(stdout, gdbHitCount) },
	}
}
