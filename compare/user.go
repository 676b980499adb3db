//go:build linux && amd64

package compare

import (
	"fmt"
	"os/exec"
	"strconv"
	"strings"
)

// Placeholder marks where the user's command takes the call count:
// `utap compare -e work --expect N -- ./myprog {N}`.
const Placeholder = "{N}"

// Expect is how many events the user's command reports at count N:
// PerN*N + Const.
type Expect struct{ PerN, Const int }

// At is the expected event count at n.
func (e Expect) At(n int) int { return e.PerN*n + e.Const }

func (e Expect) String() string {
	switch {
	case e.PerN == 0:
		return strconv.Itoa(e.Const)
	case e.Const == 0 && e.PerN == 1:
		return "N"
	case e.Const == 0:
		return fmt.Sprintf("%d*N", e.PerN)
	}
	return fmt.Sprintf("%d*N%+d", e.PerN, e.Const)
}

// ParseExpect reads --expect: a count (5000) or a sum of terms in N
// (N, 2N, 2*N+1, 3+N).
func ParseExpect(s string) (Expect, error) {
	var e Expect
	t := strings.ReplaceAll(s, " ", "")
	t = strings.ReplaceAll(t, "-", "+-")
	if t == "" {
		return e, fmt.Errorf("--expect: empty (give a count, or a count in N such as 2*N)")
	}
	for _, term := range strings.Split(strings.TrimPrefix(t, "+"), "+") {
		coef, isN := term, false
		if c, ok := strings.CutSuffix(term, "N"); ok {
			coef, isN = strings.TrimSuffix(c, "*"), true
			switch coef {
			case "":
				coef = "1"
			case "-":
				coef = "-1"
			}
		}
		v, err := strconv.Atoi(coef)
		if err != nil {
			return Expect{}, fmt.Errorf("--expect %q: %q is neither a count nor a count in N (N, 2*N, 2*N+1)", s, term)
		}
		if isN {
			e.PerN += v
		} else {
			e.Const += v
		}
	}
	if e.PerN < 0 || e.PerN == 0 && e.Const < 0 {
		return Expect{}, fmt.Errorf("--expect %q: a negative event count", s)
	}
	return e, nil
}

// UserWorkload is the user's own command. With {N} in its arguments it
// runs at two counts and the slope cancels start-up like the built-in
// workload's; without, it runs as given and a row's cost is its whole
// extra time over the untraced run divided by the expected events, start-up
// and tear-down included.
func UserWorkload(argv []string) (*Workload, error) {
	if len(argv) == 0 {
		return nil, fmt.Errorf("no command after --")
	}
	exe, err := exec.LookPath(argv[0])
	if err != nil {
		return nil, fmt.Errorf("cannot run %q: %w", argv[0], err)
	}
	single := true
	for _, a := range argv {
		if strings.Contains(a, Placeholder) {
			single = false
		}
	}
	rest := append([]string(nil), argv[1:]...)
	name := "your command: " + shellJoin(argv)
	if single {
		name += " (no {N}: start-up and tear-down included in the cost)"
	}
	return &Workload{
		Name: name,
		Exe:  exe,
		Args: func(calls string, _ int, _ string) []string {
			out := make([]string, len(rest))
			for i, a := range rest {
				out[i] = strings.ReplaceAll(a, Placeholder, calls)
			}
			return out
		},
		User:   true,
		Single: single,
	}, nil
}

// UserScenario probes the user's command with specs; expect says how many
// events a run at count N reports.
func UserScenario(specs []string, expect Expect, w *Workload) (Scenario, error) {
	if len(specs) == 0 {
		return Scenario{}, fmt.Errorf("your command needs probes: -e SPEC (repeatable) or --probes FILE")
	}
	if w.Single && expect.PerN != 0 {
		return Scenario{}, fmt.Errorf("--expect %s counts in N, but the command has no %s", expect, Placeholder)
	}
	if w.Single && expect.Const <= 0 {
		return Scenario{}, fmt.Errorf("--expect: a command without %s needs a positive event count", Placeholder)
	}
	return Scenario{
		Name: "user", Title: "your probes on your command",
		Mode: ModeCall, Threads: 1, Probes: len(specs),
		Specs: specs, Expect: expect,
	}, nil
}
