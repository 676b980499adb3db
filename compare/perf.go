//go:build linux && amd64

package compare

import (
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
)

// perf counts kernel uprobe hits with perf probe + perf stat: no event
// reaches user space, so its rows are the floor of any uprobe tracer.
type perf struct{}

func (perf) Name() string { return "perf" }

// perfGroup holds the probe events the harness defines; Cleanup deletes them.
const perfGroup = "utapcmp"

func (perf) Plan(s Scenario, w *Workload) (*Plan, error) {
	if err := noUSDT(s); err != nil {
		return nil, err
	}
	if s.Scaling {
		return nil, nil
	}
	if _, err := lookPath("perf"); err != nil {
		return nil, err
	}
	if s.Specs != nil {
		return userPerf(s, w)
	}
	if s.Count && s.Return {
		return nil, notApplicable("perf stat counts hits, it times no calls")
	}
	name := perfGroup + ":" + strings.ReplaceAll(s.Name, "-", "_")
	var defs [][]string // perf probe -a arguments
	var events []string
	var filter string
	switch {
	case IsSyscall(s.Mode):
		// The system call tracepoint: nothing to define.
		events = append(events, "syscalls:sys_enter_getppid")
	default:
		def := []string{name + "=" + w.Target}
		if s.Fetch || s.Cond != CondNone {
			def = append(def, "a=%"+w.Regs[0], "b=%"+w.Regs[1])
		}
		defs = append(defs, def)
		events = append(events, name)
		switch s.Cond {
		case CondFalse:
			filter = fmt.Sprintf("b != %d", TargetB)
		case CondTrue:
			filter = fmt.Sprintf("b == %d", TargetB)
		}
		if s.Return {
			// perf probe names a return probe EVENT__return.
			defs = append(defs, []string{name + "_ret=" + w.Target + "%return", "ret=$retval"})
			events = append(events, name+"_ret__return")
		}
	}
	p := &Plan{
		Argv: func(wl []string, out string) []string {
			argv := []string{"perf", "stat", "-x,", "-o", out}
			for _, e := range events {
				argv = append(argv, "-e", e)
				if filter != "" {
					argv = append(argv, "--filter", filter)
				}
			}
			return append(append(argv, "--"), wl...)
		},
		Count: func(out, _ string) (int, error) { return countLines(out, perfCounts(events)) },
	}
	if len(defs) > 0 {
		var shown []string
		for _, d := range defs {
			shown = append(shown, "perf probe -x "+w.Exe+" -a '"+strings.Join(d, " ")+"'")
		}
		p.Shown = strings.Join(shown, "; ") + "; "
		p.Setup = func() error {
			for _, d := range defs {
				args := append([]string{"probe", "-q", "-x", w.Exe, "-a"}, strings.Join(d, " "))
				if out, err := exec.Command("perf", args...).CombinedOutput(); err != nil {
					return fmt.Errorf("perf %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
				}
			}
			return nil
		}
		p.Cleanup = func() error {
			for _, e := range events {
				exec.Command("perf", "probe", "-q", "-d", e).Run()
			}
			return nil
		}
	}
	return p, nil
}

// perfCounts reads a line of `perf stat -x,` output, "count,unit,event,...",
// as that many events when the event is one of ours.
func perfCounts(events []string) func(string) int {
	return func(l string) int {
		f := strings.Split(l, ",")
		if len(f) < 3 || !slices.Contains(events, f[2]) {
			return 0
		}
		n, _ := strconv.Atoi(f[0]) // "<not counted>" counts 0
		return n
	}
}
