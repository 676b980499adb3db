//go:build linux && amd64

package compare

import "strings"

// strace traces system calls with PTRACE_SYSCALL stops, or, with
// --seccomp-bpf (Seccomp), stops only at the calls a seccomp filter
// selects; it takes part in the system call scenarios only.
type strace struct{ Seccomp bool }

func (s strace) Name() string {
	if s.Seccomp {
		return "strace --seccomp-bpf"
	}
	return "strace"
}

func (st strace) Plan(s Scenario, w *Workload) (*Plan, error) {
	if err := noUSDT(s); err != nil {
		return nil, err
	}
	if !IsSyscall(s.Mode) || s.Scaling {
		return nil, nil
	}
	if _, err := lookPath("strace"); err != nil {
		return nil, err
	}
	args := []string{"strace", "-f", "-qq", "-e", "trace=getppid"}
	if st.Seccomp {
		// Effective with -f only: a filter outlives the tracer's hold on
		// a child it would not follow.
		args = append(args, "--seccomp-bpf")
	}
	return &Plan{
		Argv: func(wl []string, out string) []string {
			return append(append(args, "-o", out, "--"), wl...)
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
