//go:build linux && amd64

package compare

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// Tool is a tracer the harness can run: utap with one engine, or a peer.
type Tool interface {
	Name() string
	// Plan says how the tool traces scenario s of workload w. It returns
	// (nil, nil) when the scenario is outside the tool's trade (strace and
	// function probes), and an error wrapping ErrNotApplicable with the
	// reason when the tool should but cannot (the row shows n/a and why).
	Plan(s Scenario, w *Workload) (*Plan, error)
}

// ErrNotApplicable marks a tool that cannot run a scenario.
var ErrNotApplicable = errors.New("n/a")

// errNoSDT: the workload has no static probe to trace.
var errNoSDT = notApplicable("the workload has no USDT probe (built without sys/sdt.h, or the Go workload)")

// noUSDT is the answer of the peers that cannot probe a static probe here.
func noUSDT(s Scenario) error {
	if s.Mode == ModeUSDT {
		return notApplicable("no USDT probes in this comparison")
	}
	return nil
}

func notApplicable(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrNotApplicable, fmt.Sprintf(format, args...))
}

// Plan is how one tool runs one scenario.
type Plan struct {
	// Argv wraps the workload's command line wl in the tool's; out is a
	// file of the run's own that the tool may write its events to.
	Argv func(wl []string, out string) []string
	// Count reads the events the run reported, from its out file or its
	// standard output (saved in the file stdout).
	Count func(out, stdout string) (int, error)
	// Setup runs once before the first run, Cleanup once after the last
	// (perf probe definitions).
	Setup, Cleanup func() error
	// Shown is what Setup does as a command line, for the report.
	Shown string
	// Attach, set instead of Argv in the attach rows, attaches probes
	// probes to process pid and detaches at once.
	Attach func(pid string, probes int, out string) []string
}

// Peers lists the peer tools by name, in report order.
func Peers() []Tool {
	return []Tool{ltrace{}, gdb{}, strace{}, strace{Seccomp: true}, bpftrace{}, perf{}}
}

// SelectPeers picks peers for --peers: "auto" takes those on PATH, "none"
// none, else a comma list (a missing one still gets an n/a row).
func SelectPeers(spec string) ([]Tool, error) {
	all := Peers()
	switch spec {
	case "none", "":
		return nil, nil
	case "auto":
		var out []Tool
		for _, t := range all {
			if _, err := exec.LookPath(program(t)); err == nil {
				out = append(out, t)
			}
		}
		return out, nil
	}
	var out []Tool
	for _, n := range strings.Split(spec, ",") {
		n = strings.TrimSpace(n)
		found := false
		for _, t := range all {
			if t.Name() == n || program(t) == n { // strace: both its rows
				out, found = append(out, t), true
			}
		}
		if !found {
			return nil, fmt.Errorf("--peers: unknown tool %q (known: ltrace, gdb, strace, bpftrace, perf; or auto, none)", n)
		}
	}
	return out, nil
}

// program is the command a tool runs: its name's first word ("strace
// --seccomp-bpf" is strace).
func program(t Tool) string { return strings.Fields(t.Name())[0] }

// lookPath is exec.LookPath with a reason fit for an n/a row.
func lookPath(name string) (string, error) {
	p, err := exec.LookPath(name)
	if err != nil {
		return "", notApplicable("%s not found on PATH", name)
	}
	return p, nil
}
