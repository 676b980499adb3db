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

// ltraceRun runs `utap run --backend B -q ARGS -- argv` on every backend,
// checks the command ran as untraced, and hands check the event lines.
func ltraceRun(t *testing.T, argv []string, args []string, check func(t *testing.T, lines []string, stderr string)) {
	t.Helper()
	stdout, code := untraced(t, argv)
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			b.need(t)
			out := filepath.Join(t.TempDir(), "events")
			all := append(append([]string{"run", "--backend", b.name, "-q", "-o", out}, args...), "--")
			r := utap(t, append(all, argv...)...)
			if r.code != code || r.stdout != stdout {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d and %q", r.code, r.stdout, r.stderr, code, stdout)
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			events := strings.TrimSuffix(string(data), "\n")
			var lines []string
			if events != "" {
				lines = strings.Split(events, "\n")
			}
			// The process's end, as ltrace shows it, ends every trace.
			if n := len(lines); n == 0 || !ltraceEndLine.MatchString(lines[n-1]) {
				t.Errorf("no \"+++ exited (status N) +++\" line at the end:\n%s", events)
			} else {
				lines = lines[:n-1]
			}
			check(t, lines, r.stderr)
		})
	}
}

// ltraceEndLine is ltrace's last line: the process's end.
var ltraceEndLine = regexp.MustCompile(`\+\+\+ (exited \(status \d+\)|killed by SIG\w+) \+\+\+$`)

func wantMatches(t *testing.T, lines []string, res ...string) {
	t.Helper()
	if len(lines) != len(res) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(res), strings.Join(lines, "\n"))
	}
	for i, re := range res {
		if !regexp.MustCompile(re).MatchString(lines[i]) {
			t.Errorf("line %q does not match %s", lines[i], re)
		}
	}
}

// TestCLILtraceX: -x GLOB is the spec GLOB in the executable; -i shows
// where each call returns to, as ltrace -i: an address in the caller,
// main, which is not work's own.
func TestCLILtraceX(t *testing.T) {
	argv := []string{etWork(t), "args"}
	ltraceRun(t, argv, []string{"-x", "work*", "-i"}, func(t *testing.T, lines []string, _ string) {
		a := `\[pid \d+\] \[(0x[0-9a-f]+)\] `
		wantMatches(t, lines, a+`work\(1, 2\) = 3$`, a+`work\(3, 4\) = 7$`, a+`work\(5, 6\) = 11$`, a+`work\(4, 3\) = 7$`, a+`work2\(5\) = 15$`)
		addr := regexp.MustCompile(`\[0x([0-9a-f]+)\]`)
		seen := map[string]bool{}
		for _, l := range lines {
			if m := addr.FindStringSubmatch(l); m != nil {
				seen[m[1]] = true
			}
		}
		if len(lines) == 5 && len(seen) < 2 {
			t.Errorf("one return address for five calls from different places: %q", lines)
		}
	})
}

// TestCLILtraceFilter: --ltrace-e's rules: SYM (the program's calls
// through its PLT), + and -, SYM@LIB in the library.
func TestCLILtraceFilter(t *testing.T) {
	argv := []string{etWork(t), "args"}
	t.Run("plt", func(t *testing.T) {
		ltraceRun(t, argv, []string{"--ltrace-e", "strlen+printf-printf"}, func(t *testing.T, lines []string, _ string) {
			wantMatches(t, lines, `^\[pid \d+\] strlen\("hello"\) = 5$`, `^\[pid \d+\] strlen\("world"\) = 5$`)
		})
	})
	t.Run("lib", func(t *testing.T) {
		// -E is --ltrace-e; libc's own strlen is an IFUNC's implementation.
		ltraceRun(t, argv, []string{"-E", "printf@libc.so*"}, func(t *testing.T, lines []string, _ string) {
			wantMatches(t, lines, `^\[pid \d+\] printf\("args %ld\\n"`)
		})
	})
	// ltrace's -A: accepted, the same lines (ltrace.conf's arrays are
	// strings), and said.
	t.Run("A", func(t *testing.T) {
		ltraceRun(t, argv, []string{"-A", "2", "--ltrace-e", "strlen"}, func(t *testing.T, lines []string, _ string) {
			wantMatches(t, lines, `^\[pid \d+\] strlen\("hello"\) = 5$`, `^\[pid \d+\] strlen\("world"\) = 5$`)
		})
	})
	if r := utap(t, "run", "-A", "2", "--ltrace-e", "strlen", "--", "true"); r.code != 0 || !strings.Contains(r.stderr, "-A 2: no arrays to cut") {
		t.Errorf("-A: exit %d, stderr %q", r.code, r.stderr)
	}
	r := utap(t, "run", "--ltrace-e", "/mal+/", "--", "true")
	oneErrorLine(t, r, "--ltrace-e", "regular expressions (/re/) are not supported")
	r = utap(t, "run", "--ltrace-e", "malloc@lib*", "--", "true")
	oneErrorLine(t, r, `library pattern "lib*"`)
}

// TestCLILtraceL: -l LIB probes every function of the library.
func TestCLILtraceL(t *testing.T) {
	lib := etCtorLib(t)
	ltraceRun(t, []string{etCtorMain(t)}, []string{"-l", lib}, func(t *testing.T, lines []string, _ string) {
		var hello []string
		for _, l := range lines {
			if strings.Contains(l, "et_ctor_hello(") {
				hello = append(hello, l)
			}
		}
		wantMatches(t, hello, `et_ctor_hello\(7, `, `et_ctor_hello\(8, `) // no DWARF: ltrace's default, small values in decimal
	})
	r := utap(t, "run", "-l", "lib*", "--", "true")
	oneErrorLine(t, r, `-l "lib*"`)
}

// TestCLILtraceClocks: -t, -ttt and -r stamp the lines as ltrace does,
// after the thread.
func TestCLILtraceClocks(t *testing.T) {
	argv := []string{etWork(t), "args"}
	for _, c := range []struct{ flag, re string }{
		{"-t", `^\[pid \d+\] \d\d:\d\d:\d\d work\(`},
		{"-ttt", `^\[pid \d+\] \d{10}\.\d{6} work\(`},
		{"-r", `^\[pid \d+\] +\d+\.\d{6} work\(`},
	} {
		t.Run(c.flag, func(t *testing.T) {
			ltraceRun(t, argv, []string{c.flag, "-e", "work"}, func(t *testing.T, lines []string, _ string) {
				wantMatches(t, lines, c.re, c.re, c.re, c.re)
				if c.flag == "-r" && len(lines) > 0 && !strings.Contains(lines[0], "]   0.000000 ") {
					t.Errorf("-r: first line %q, want 0.000000", lines[0])
				}
			})
		})
	}
}

// TestCLICxxOverloadParams: a parameter name binds each overload by its
// own names; overloads without it are skipped with a notice.
func TestCLICxxOverloadParams(t *testing.T) {
	bin := fixture.C(t, "et_cxx.cc", "-O1", "-g")
	ltraceRun(t, []string{bin}, []string{"-e", "app::Server::handle(y)"}, func(t *testing.T, lines []string, stderr string) {
		wantMatches(t, lines, `^\[pid \d+\] app::Server::handle\(3\)`)
		if !strings.Contains(stderr, "1 of 2 functions skipped") || !strings.Contains(stderr, "app::Server::handle(this, x)") {
			t.Errorf("stderr %q: want the skipped overload named, even with -q", stderr)
		}
	})
	r := utap(t, "run", "-e", "app::Server::handle(z)", "--", bin)
	oneErrorLine(t, r, `"z" is not a parameter`, "none of its 2 functions")
}

// TestCLISizedAndNullStrings: memcpy's source as ltrace.conf sizes it
// (string(array(char, arg3)*): every byte, NULs included) and a NULL
// char * returned by getenv, on both engines.
func TestCLISizedAndNullStrings(t *testing.T) {
	cxx := fixture.C(t, "cxx_calls.cc", "-O1", "-g")
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			b.need(t)
			r := utap(t, "run", "--backend", b.name, "-q", "--entry-only", "-E", "memcpy", "--", cxx)
			if !regexp.MustCompile(`(?m)^\[pid \d+\] memcpy\(0x[0-9a-f]+, "pears\\0", 6\)$`).MatchString(r.stderr) {
				t.Errorf("no sized memcpy source in:\n%s", r.stderr)
			}
			r = utap(t, "run", "--backend", b.name, "-q", "-e", "libc:getenv", "--", "sort", "/dev/null")
			if !regexp.MustCompile(`(?m)^\[pid \d+\] getenv\("POSIXLY_CORRECT"\) = NULL$`).MatchString(r.stderr) {
				t.Errorf("no NULL getenv in:\n%s", r.stderr)
			}
		})
	}
}

// TestCLIPrintfArguments: printf's variadic arguments are shown as its
// format says (ltrace's format lens), on both engines.
func TestCLIPrintfArguments(t *testing.T) {
	bin := fixture.C(t, "va_printf.c", "-O0")
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			b.need(t)
			r := utap(t, "run", "--backend", b.name, "-q", "-E", "printf", "--", bin)
			for _, want := range []string{
				`printf\("%d %s %x %c %u %ld\|\\n", -5, "str", 0xff, 'A', 7, -9\) = 18`,
				`printf\("%s %p %lu %%\\n", NULL, 0x1234, 42\) = 19`,
				`printf\("%5.2f %d\\n", \?, 3\) = 8`,
			} {
				if !regexp.MustCompile(`(?m)^\[pid \d+\] ` + want + `$`).MatchString(r.stderr) {
					t.Errorf("no line matching %s in:\n%s", want, r.stderr)
				}
			}
		})
	}
}

// TestCLILtraceNoReturn: a call its process ends inside (exit) shows as
// ltrace shows it, "<no return ...>", and is not counted as a return the
// trace failed to see.
func TestCLILtraceNoReturn(t *testing.T) {
	ltraceRun(t, []string{"true"}, []string{"-e", "libc:exit"}, func(t *testing.T, lines []string, stderr string) {
		wantMatches(t, lines, `exit\(0 <no return \.\.\.>$`)
		if strings.Contains(stderr, "not seen") {
			t.Errorf("stderr: %s", stderr)
		}
	})
}
