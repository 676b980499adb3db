//go:build linux && amd64

package enginetest

import (
	"strings"
	"testing"

	"github.com/utap/utap/internal/need"
)

// TestCLIHabits: what a strace, ltrace or bpftrace user types by habit or
// by mistake gets one line that says what utap calls it, with exit 2, and
// nothing runs.
func TestCLIHabits(t *testing.T) {
	bin := etWork(t)
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"rnu", "-e", "work", "--", bin}, []string{`unknown command "rnu"`, `did you mean "run"`}},
		{[]string{"run", "--entyr-only", "-e", "work", "--", bin}, []string{"entyr-only", "did you mean --entry-only"}},
		{[]string{"attach", "-e", "work"}, []string{"-p PID"}},
		{[]string{"run", "-e", "work(arg0)", "--", bin}, []string{"arg0", "utap's arg1"}},
		{[]string{"run", "-e", "return:work(retval)", "--", bin}, []string{"retval", "utap's is ret"}},
		{[]string{"run", "-e", "kprobe:do_sys_open", "--", bin}, []string{"kprobe", "syscall:NAME"}},
		{[]string{"run", "-e", "tracepoint:syscalls:sys_enter_openat", "--", bin}, []string{"syscall:openat"}},
	} {
		t.Run(strings.Join(c.args[:2], "_"), func(t *testing.T) {
			r := utap(t, c.args...)
			oneErrorLine(t, r, c.want...)
			if strings.Contains(r.stderr, "spec \"work(arg0)\": spec") {
				t.Errorf("the spec is named twice: %s", r.stderr)
			}
		})
	}
	// Help spells strace's -tt as typed.
	r := utap(t, "run", "--help")
	if !strings.Contains(r.stdout, "\n   -tt ") || strings.Contains(r.stdout, "--tt ") {
		t.Errorf("run --help does not show -tt as typed")
	}
}

// TestCLILtraceFilterUnmatched: a name of ltrace's filters that matches
// no function is left out with a note, as ltrace skips it; the others are
// traced, entry and return joined as usual. All names unmatched: an error.
func TestCLILtraceFilterUnmatched(t *testing.T) {
	bin := etWork(t)
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			b.need(t)
			r := utap(t, "run", "--backend", b.name, "-x", "work+no_such_fn", "-o", "-", "--", bin)
			if r.code != 0 || !strings.Contains(r.stderr, "no_such_fn matches no function") ||
				!regexpMatch(`work\(.*\) = `, r.stdout) {
				t.Fatalf("exit %d\nstdout %q\nstderr %q", r.code, r.stdout, r.stderr)
			}
			oneErrorLine(t, utap(t, "run", "--backend", b.name, "-x", "no_such_fn", "--", bin), "no_such_fn")
		})
	}
}

// TestCLIBareNamePLT: ltrace's -e opendir traces the program's calls to
// opendir; utap reads a bare name the program does not define but calls
// through its PLT the same way (SYM@plt), with a note, on both engines;
// a name it neither defines nor calls is still an error.
func TestCLIBareNamePLT(t *testing.T) {
	need.Root(t)
	for _, backend := range []string{"ptrace", "uprobe"} {
		t.Run(backend, func(t *testing.T) {
			if backend == "uprobe" {
				need.Uprobes(t)
			}
			r := utap(t, "run", "--backend", backend, "-e", "opendir", "--", "/bin/ls", "/")
			if r.code != 0 || !strings.Contains(r.stdout+r.stderr, `opendir("/") = 0x`) ||
				!strings.Contains(r.stderr, "traced as ltrace -e opendir does") {
				t.Errorf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
		})
	}
	r := utap(t, "run", "-e", "nosuchfn", "--", "/bin/ls", "/")
	oneErrorLine(t, r, `no function matches "nosuchfn"`)
}
