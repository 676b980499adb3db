//go:build linux && amd64

package compare

import (
	"fmt"
	"strconv"
	"strings"
)

// bpftrace attaches kernel uprobes with BPF programs and prints each event
// from user space, the nearest peer of utap's uprobe engine.
type bpftrace struct{}

func (bpftrace) Name() string { return "bpftrace" }

func (bpftrace) Plan(s Scenario, w *Workload) (*Plan, error) {
	if s.Scaling && !s.Attach {
		return nil, nil
	}
	if _, err := lookPath("bpftrace"); err != nil {
		return nil, err
	}
	switch {
	case s.Attach:
		return bpftraceAttach(s, w)
	case s.Specs != nil:
		return userBpftrace(s, w)
	}
	loc := "uprobe:" + w.Exe + ":" + w.Target
	// uprobes on the executable's inode fire in every process running it:
	// the filter keeps the count to the traced command.
	filter := "/pid == cpid/"
	if IsSyscall(s.Mode) {
		// The system call's own tracepoint, bpftrace's way to trace one.
		loc = "tracepoint:syscalls:sys_enter_getppid"
	}
	if s.Mode == ModeUSDT {
		if !w.USDT {
			return nil, errNoSDT
		}
		loc = "usdt:" + w.Exe + ":utap:tick"
	}
	switch s.Cond {
	case CondFalse:
		filter = fmt.Sprintf(`/pid == cpid && reg("%s") != %d/`, w.Regs[1], TargetB)
	case CondTrue:
		filter = fmt.Sprintf(`/pid == cpid && reg("%s") == %d/`, w.Regs[1], TargetB)
	}
	body := `printf("E\n");`
	count := func(out, _ string) (int, error) { return countLines(out, prefixed("E", "R ")) }
	if s.Count {
		// Counted in a BPF map, printed once at exit as "@c: N".
		body = `@c = count();`
		count = func(out, _ string) (int, error) { return countLines(out, bpftraceMapCount("c")) }
	}
	if s.Fetch {
		body = fmt.Sprintf(`printf("E %%d %%d\n", reg("%s"), reg("%s"));`, w.Regs[0], w.Regs[1])
	}
	if s.Return && w.Static {
		return nil, notApplicable("uretprobes rewrite return addresses, which Go's stack unwinder does not survive")
	}
	prog := fmt.Sprintf("%s %s { %s }", loc, filter, body)
	if s.Count && s.Return {
		// A latency histogram, bpftrace's -c: the entry's time by thread,
		// the duration at the return.
		prog = fmt.Sprintf(`%s %s { @s[tid] = nsecs; } uretprobe:%s:%s /pid == cpid && @s[tid]/ `+
			`{ @ns = hist(nsecs - @s[tid]); @c = count(); delete(@s[tid]); }`, loc, filter, w.Exe, w.Target)
	} else if s.Return {
		prog += fmt.Sprintf(` uretprobe:%s:%s /pid == cpid/ { printf("R %%d\n", retval); }`, w.Exe, w.Target)
	}
	return &Plan{
		Argv: func(wl []string, out string) []string {
			return []string{"bpftrace", "-q", "-o", out, "-e", prog, "-c", strings.Join(wl, " ")}
		},
		Count: count,
	}, nil
}

// bpftraceAttach attaches uprobes on the target and never-called
// functions to one process and exits from BEGIN, which runs once every
// probe is attached.
func bpftraceAttach(s Scenario, w *Workload) (*Plan, error) {
	if len(w.Idle) < s.Probes-1 {
		return nil, notApplicable("the workload has %d never-called functions, %d needed", len(w.Idle), s.Probes-1)
	}
	return &Plan{
		Attach: func(pid string, probes int, out string) []string {
			locs := []string{"uprobe:" + w.Exe + ":" + w.Target}
			for _, f := range w.Idle[:max(0, min(probes-1, len(w.Idle)))] {
				locs = append(locs, "uprobe:"+w.Exe+":"+f)
			}
			prog := strings.Join(locs, ", ") + " { printf(\"E\\n\"); } BEGIN { exit(); }"
			// bpftrace refuses more than 512 probes unless told (BEGIN counts).
			return []string{"env", "BPFTRACE_MAX_PROBES=" + strconv.Itoa(probes+1),
				"bpftrace", "-q", "-o", out, "-p", pid, "-e", prog}
		},
		Count: func(out, _ string) (int, error) { return countLines(out, prefixed("E")) },
	}, nil
}
