//go:build linux && amd64

package enginetest

import (
	"strings"
	"testing"

	"github.com/utap/utap/internal/need"
)

// TestCLIAutoBackendPads: --backend auto takes the ptrace engine when
// every probe would run in-process (a pad: no stop, no kernel entry), and
// the kernel's uprobes otherwise (--no-pads). A
// return alone takes a pad that only hijacks. The default trace, an
// entry with its return, and -c's timed calls run in-process. A run's
// system calls alone take the ptrace engine too.
func TestCLIAutoBackendPads(t *testing.T) {
	need.Uprobes(t)
	bin := etWork(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--entry-only", "-e", "work(arg1, arg2)"}, "utap: backend ptrace: every probe runs in-process (pads)"},
		{[]string{"--count-only", "-e", "work"}, "utap: backend ptrace: every probe runs in-process (pads)"},
		{[]string{"-e", "work"}, "utap: backend ptrace: every probe runs in-process (pads)"},
		{[]string{"-e", "work(arg1, arg2)"}, "utap: backend ptrace: every probe runs in-process (pads)"},
		{[]string{"-c", "-e", "work"}, "utap: backend ptrace: every probe runs in-process (pads)"},
		{[]string{"-e", "work%return"}, "utap: backend ptrace: every probe runs in-process (pads)"},
		{[]string{"-e", "work%return(ret, arg1)"}, "utap: backend ptrace: every probe runs in-process (pads)"},
		// A pad reads by loads while utap lives: no system call (utap is not
		// under a seccomp filter here).
		{[]string{"--entry-only", "-e", "greet(str(arg1))"}, "utap: backend ptrace: every probe runs in-process (pads)"},
		// A return reads memory in its return pad too.
		{[]string{"-e", "greet%return(str(arg1))"}, "utap: backend ptrace: every probe runs in-process (pads)"},
		{[]string{"--entry-only", "--no-pads", "-e", "work"}, "utap: backend uprobe"},
		// System calls only, in run mode: in-process or behind the
		// filter, started at once (the kernel engine's verifier takes a
		// second for -S); on stops only, the kernel engine.
		{[]string{"-e", "trace=write"}, "utap: backend ptrace: system calls run in-process (pads)"},
		{[]string{"--no-pads", "-e", "trace=write"}, "utap: backend uprobe"},
		{[]string{"--no-seccomp", "-e", "trace=write"}, "utap: backend uprobe"},
	} {
		r := utap(t, append(append([]string{"run"}, c.args...), "--", bin, "args")...)
		if r.code != 0 || !strings.Contains(r.stderr, c.want) || !strings.Contains(r.stdout+r.stderr, c.args[len(c.args)-1][:4]) {
			t.Errorf("%q: exit %d, stderr %q, want %q", c.args, r.code, r.stderr, c.want)
		}
	}
}

// TestCLIAutoBackendIFunc: an IFUNC (libc's strlen, memcpy) takes the
// ptrace engine when every implementation its resolver may pick takes a
// pad (memmove's through a hop); two IFUNCs that may resolve to one
// implementation would be two probes at one address: the kernel's.
func TestCLIAutoBackendIFunc(t *testing.T) {
	need.Uprobes(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-e", "libc:strlen"}, "utap: backend ptrace: every probe runs in-process (pads)"},
		{[]string{"-c", "-e", "libc:memcpy"}, "utap: backend ptrace: every probe runs in-process (pads)"},
		{[]string{"-e", "libc:memcpy", "-e", "libc:memmove"}, "utap: backend uprobe"},
	} {
		r := utap(t, append(append([]string{"run"}, c.args...), "--", "/bin/true")...)
		if r.code != 0 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%q: exit %d, stderr %q, want %q", c.args, r.code, r.stderr, c.want)
		}
	}
}
