//go:build linux && amd64

package compare

import "strings"

// ltrace traces with int3 breakpoints from a ptrace tracer, one process,
// the way utap's ptrace engine does; it always shows arguments and return
// values, so its entry rows already pay for fetch and return.
type ltrace struct{}

func (ltrace) Name() string { return "ltrace" }

func (ltrace) Plan(s Scenario, w *Workload) (*Plan, error) {
	if err := noUSDT(s); err != nil {
		return nil, err
	}
	if s.Scaling {
		return nil, nil
	}
	if s.Specs != nil {
		if _, err := lookPath("ltrace"); err != nil {
			return nil, err
		}
		return userLtrace(s, w)
	}
	if w.Static {
		return nil, notApplicable("ltrace needs .dynsym and the dynamic loader; the %s workload is a static binary", w.Target)
	}
	if s.Cond != CondNone {
		return nil, notApplicable("ltrace has no conditions")
	}
	if _, err := lookPath("ltrace"); err != nil {
		return nil, err
	}
	fn := w.Target
	// -L: no library calls, only -x (the default traces every PLT call).
	sel := []string{"-L", "-x", fn}
	if IsSyscall(s.Mode) {
		fn = "getppid"
		sel = []string{"-e", fn}
	}
	if s.Count {
		return ltraceCount(fn, sel), nil
	}
	return &Plan{
		Argv: func(wl []string, out string) []string {
			argv := append([]string{"ltrace", "-f"}, sel...)
			return append(append(argv, "-o", out, "--"), wl...)
		},
		Count: func(out, _ string) (int, error) { return countLines(out, callLines(fn, s.Return)) },
	}, nil
}

// callLines counts the events of ltrace's lines, and utap's default
// trace's, of fn: a line per call, "fn(args) = ret" (two: its entry and,
// if ret, its return), or split in two around another thread's line
// ("fn(args <unfinished ...>" then "<... fn resumed> ) = ret").
func callLines(fn string, ret bool) func(string) int {
	call, resumed := fn+"(", "<... "+fn+" resumed>"
	return func(l string) int {
		n := 0
		entry := strings.Contains(l, call)
		if entry {
			n++
		}
		if ret && strings.Contains(l, " = ") && (entry || strings.Contains(l, resumed)) {
			n++
		}
		return n
	}
}

// ltraceCount runs `ltrace -c`: every call still stops the tracee on entry
// and return (the table times each call), but nothing is printed until the
// table at exit.
func ltraceCount(fn string, sel []string) *Plan {
	return &Plan{
		Argv: func(wl []string, out string) []string {
			argv := append([]string{"ltrace", "-c", "-f"}, sel...)
			return append(append(argv, "-o", out, "--"), wl...)
		},
		Count: func(out, _ string) (int, error) { return countLines(out, ltraceTableCalls(fn)) },
	}
}
