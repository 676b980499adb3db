//go:build linux && amd64

package enginetest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
)

// TestCLIPadsMemReads: probes whose conditions and fetches read memory
// (str(), *(T*), str() == literal) take pads, and their events are the
// breakpoint path's (--no-pads), line for line, over good strings, NULL,
// an unmapped page, a PROT_NONE page, strings running into a PROT_NONE
// page with and without their NUL, and longer than a probe's string; the
// command's output and exit are its own.
func TestCLIPadsMemReads(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "pad_strs.c")
	specs := []string{
		`show(str(arg1), *(int*)arg2)`,
		`show(*(int*)arg2, str(arg1)) if str(arg1) == "tail"`,
		`show(*(short*)arg2, str(arg1)) if *(int*)arg2 == 42 && str(arg1) != "hello"`,
	}
	dir := t.TempDir()
	for _, spec := range specs {
		var runs [2]string
		for i, mode := range []string{"--pads", "--no-pads"} {
			out := filepath.Join(dir, "events")
			args := []string{"run", "-v", "--backend", "ptrace", "--entry-only", "-s", "300", "-o", out, "-e", spec, "--", bin}
			if mode == "--no-pads" {
				args = append([]string{args[0], mode}, args[1:]...)
			}
			r := utap(t, args...)
			if r.code != 0 || r.stdout != "94\n" {
				t.Fatalf("%s %s: exit %d, output %q\n%s", spec, mode, r.code, r.stdout, lastLines(r.stderr, 5))
			}
			if padded := strings.Contains(r.stderr, "in-process pad"); padded != (i == 0) {
				t.Fatalf("%s %s: pad %v:\n%s", spec, mode, padded, r.stderr)
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			runs[i] = pidless.ReplaceAllString(string(b), "")
		}
		if runs[0] != runs[1] {
			t.Errorf("%s: with pads\n%s\nwith breakpoints\n%s", spec, runs[0], runs[1])
		}
		if !strings.Contains(runs[0], "?") || strings.Count(runs[0], "\n") < 3 {
			t.Errorf("%s: no unreadable value, or few events:\n%s", spec, runs[0])
		}
	}
}

var pidless = regexp.MustCompile(`(?m)^\[pid \d+\] `)

// TestCLIPadsMemReadsTracerKilled: the tracer is SIGKILLed while the
// command calls a function whose pad reads str(arg1) and *(int*)arg2 of
// NULL, unmapped and PROT_NONE pointers as fast as it can: without a
// tracer to catch anything, the reads fail and the command runs on to
// its end.
func TestCLIPadsMemReadsTracerKilled(t *testing.T) {
	need.Root(t)
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	bin := fixture.C(t, "pad_strs.c")
	goOn := filepath.Join(t.TempDir(), "go")
	child, lines := padsKilledWith(t, bin, "--entry-only", `show(str(arg1), *(int*)arg2)`, "show has no pad", "loop", goOn)
	if n := statusField(t, child, "TracerPid"); n != "0" {
		t.Errorf("the command is still traced by %s", n)
	}
	// Time for the calls to fill the ring's string records and give the
	// tracer up (the test passes without: more of it runs with).
	time.Sleep(1500 * time.Millisecond)
	if err := os.WriteFile(goOn, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var last string
	for lines.Scan() {
		last = lines.Text()
	}
	if last != "done" {
		t.Fatalf("the command's last line %q, want \"done\" (pid %d)", last, child)
	}
}

// TestCLIPadsProtoStrings: a libc prototype's char * arguments (open's
// path, fopen's path and mode) are read in the pad: -v says each site
// took one, and the events are the breakpoint path's.
func TestCLIPadsProtoStrings(t *testing.T) {
	need.Root(t)
	file := filepath.Join(t.TempDir(), "some file")
	if err := os.WriteFile(file, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var runs [2]string
	for i, mode := range [][]string{nil, {"--no-pads"}} {
		out := filepath.Join(t.TempDir(), "events")
		args := append(append([]string{"run"}, mode...), "-v", "--backend", "ptrace", "--entry-only", "-s", "300", "-o", out,
			"-e", "libc:open", "-e", "libc:fopen", "--", "cat", file)
		r := utap(t, args...)
		if r.code != 0 || r.stdout != "x\n" {
			t.Fatalf("%q: exit %d, output %q\n%s", args, r.code, r.stdout, lastLines(r.stderr, 5))
		}
		if i == 0 && !regexp.MustCompile(`(?m)^utap: open\+0x0 at \S+: in-process pad`).MatchString(r.stderr) {
			t.Fatalf("open has no pad:\n%s", r.stderr)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		runs[i] = pidless.ReplaceAllString(string(b), "")
	}
	if want := `open("` + file + `", 0)`; !strings.Contains(runs[0], want) {
		t.Errorf("no %s in\n%s", want, runs[0])
	}
	if runs[0] != runs[1] {
		t.Errorf("with pads\n%s\nwith breakpoints\n%s", runs[0], runs[1])
	}
}

// TestCLIPadsMemReadsSeccomp: in a process under a seccomp filter of its
// own (it could kill the system calls a pad's read makes), a probe that
// reads memory keeps its breakpoint, and says so; its events are all there.
func TestCLIPadsMemReadsSeccomp(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "pad_strs.c")
	out := filepath.Join(t.TempDir(), "events")
	r := utap(t, "run", "-v", "--backend", "ptrace", "--entry-only", "-o", out, "-e", `show(str(arg1), *(int*)arg2)`, "--", bin, "seccomp")
	if r.code != 0 || r.stdout != "94\n" {
		t.Fatalf("exit %d, output %q\n%s", r.code, r.stdout, lastLines(r.stderr, 5))
	}
	if !regexp.MustCompile(`(?m)^utap: show\+0x0 at \S+: breakpoint: .*seccomp filter$`).MatchString(r.stderr) {
		t.Fatalf("the exec'd image under the filter: no breakpoint said:\n%s", r.stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "show("); n != 55 {
		t.Fatalf("%d events, want 55:\n%s", n, b)
	}
}
