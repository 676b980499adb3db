//go:build linux && amd64

package enginetest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/utap/utap/internal/fixture"
)

// TestCLIReturnsTwice: the default trace (a return probe beside every
// entry) of functions that return twice — setjmp, sigsetjmp, getcontext,
// swapcontext, left by longjmp, siglongjmp and setcontext — and of vfork,
// whose child returns first through its parent's frames. Hijacking the
// first kind's return killed the program (bash's `[` looped on its
// longjmp, pyenv's shims with it); a vfork's return pad killed the parent
// with SIGILL. Now the program's output is its own on every engine and
// path, setjmp's calls show their entries only, said once, and each
// vfork its child's pid.
func TestCLIReturnsTwice(t *testing.T) {
	bin := fixture.C(t, "twice.c")
	argv := []string{bin, "3"}
	stdout, _ := untraced(t, argv)
	variants := []struct {
		name, backend string
		flags         []string
	}{
		{"pads", "ptrace", nil},
		{"no-pads", "ptrace", []string{"--no-pads"}},
		{"uprobe", "uprobe", nil},
	}
	specs := map[string][]string{
		"plt":  {"-E", "*"},
		"libc": {"-e", "libc:_setjmp", "-e", "libc:__sigsetjmp", "-e", "libc:getcontext", "-e", "libc:swapcontext", "-e", "libc:vfork", "-e", "libc:longjmp"},
	}
	// A line's pid: "N " into a file with -f (strace's and ltrace's
	// column), "[pid N] " else.
	vforked := regexp.MustCompile(`(?m)^(?:\d+|\[pid \d+\]) (vfork\(.*\) = |<\.\.\. vfork resumed> \) = )(0x[1-9a-f][0-9a-f]*|[1-9]\d*)$`)
	for _, v := range variants {
		for what, spec := range specs {
			for _, follow := range []bool{false, true} {
				name := v.name + "/" + what
				if follow {
					name += "/-f"
				}
				t.Run(name, func(t *testing.T) {
					needBackend(t, v.backend)
					out := filepath.Join(t.TempDir(), "out")
					args := append([]string{"run", "--backend", v.backend, "-o", out}, v.flags...)
					if follow {
						args = append(args, "-f")
					}
					r := utap(t, append(append(args, spec...), append([]string{"--"}, argv...)...)...)
					if r.stdout != stdout || r.code != 0 {
						t.Fatalf("exit %d, stdout %q; want %q\n%s", r.code, r.stdout, stdout, r.stderr)
					}
					if !strings.Contains(r.stderr, "setjmp") || !strings.Contains(r.stderr, "returns twice") {
						t.Errorf("no notice of setjmp's returns:\n%s", r.stderr)
					}
					b, err := os.ReadFile(out)
					if err != nil {
						t.Fatal(err)
					}
					trace := string(b)
					if n := len(vforked.FindAllString(trace, -1)); n != 3 {
						t.Errorf("%d vforks with a child's pid, want 3:\n%s", n, trace)
					}
					setjmps := regexp.MustCompile(`(?m)^(?:\d+|\[pid \d+\]) _setjmp\(.*\)$`).FindAllString(trace, -1)
					if len(setjmps) < 3 {
						t.Errorf("%d _setjmp lines, each its entry alone, want 3 or more:\n%s", len(setjmps), trace)
					}
				})
			}
		}
	}
}

// TestCLIReturnsTwiceRefused: a return probe asked for on setjmp is
// refused, in one line naming it, before the command runs.
func TestCLIReturnsTwiceRefused(t *testing.T) {
	bin := fixture.C(t, "twice.c")
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			b.need(t)
			r := utap(t, "run", "-q", "--backend", b.name, "-e", "libc:_setjmp%return", "--", bin, "1")
			if r.code == 0 || r.stdout != "" {
				t.Fatalf("exit %d, stdout %q: the command ran", r.code, r.stdout)
			}
			oneErrorLine(t, r, "_setjmp", "returns twice")
		})
	}
}

// TestCLIEntryPointReturn: the default trace of _start (ltrace -x
// '*@MAIN' matches it): nothing called it, and the word a hijacked return
// would take is argc, which perl and python then misread. Its line shows
// the entry alone, and the program its own arguments.
func TestCLIEntryPointReturn(t *testing.T) {
	bin := fixture.C(t, "twice.c")
	want, _ := untraced(t, []string{bin, "2"})
	for _, v := range [][]string{{"ptrace"}, {"ptrace", "--no-pads"}, {"uprobe"}} {
		t.Run(strings.Join(v, " "), func(t *testing.T) {
			needBackend(t, v[0])
			args := append([]string{"run", "--backend"}, v...)
			r := utap(t, append(args, "-x", "_start@MAIN", "--", bin, "2")...)
			if r.code != 0 || r.stdout != want || !strings.Contains(r.stderr, "_start: its calls show no return value") {
				t.Fatalf("exit %d, stdout %q, want %q\n%s", r.code, r.stdout, want, r.stderr)
			}
		})
	}
}
