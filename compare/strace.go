//go:build linux && amd64

package compare

import "strings"

// strace traces system calls with PTRACE_SYSCALL stops; it takes part in
// the syscall scenario only.
type strace struct{}

func (strace) Name() string { return "strace" }

func (strace) Plan(s Scenario, w *Workload) (*Plan, error) {
	if err := noUSDT(s); err != nil {
		return nil, err
	}
	if s.Mode != ModeSyscall || s.Scaling {
		return nil, nil
	}
	if _, err := lookPath("strace"); err != nil {
		return nil, err
	}
	return &Plan{
		Argv: func(wl []string, out string) []string {
			return append([]string{"strace", "-f", "-qq", "-e", "trace=getppid", "-o", out, "--"}, wl...)
		},
		Count: func(out, _ string) (int, error) {
			return countLines(out, func(l string) int {
				if strings.Contains(l, "getppid(") {
					return 1
				}
				return 0
			})
		},
	}, nil
}
