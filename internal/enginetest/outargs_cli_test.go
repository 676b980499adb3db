//go:build linux && amd64

package enginetest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
)

// outArgsArgv is the out_args fixture on a file holding "hello-world\n".
func outArgsArgv(t *testing.T) []string {
	in := filepath.Join(t.TempDir(), "in.txt")
	if err := os.WriteFile(in, []byte("hello-world\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return []string{fixture.C(t, "out_args.c"), in}
}

// outArgsVariants are the backends, the ptrace engine with pads and without.
func outArgsVariants(t *testing.T, run func(t *testing.T, backend string, extra []string)) {
	for _, b := range backends {
		for _, pads := range []string{"", "--no-pads"} {
			if pads != "" && b.name != "ptrace" {
				continue
			}
			t.Run(strings.TrimSpace(b.name+" "+pads), func(t *testing.T) {
				b.need(t)
				var extra []string
				if pads != "" {
					extra = []string{pads}
				}
				run(t, b.name, extra)
			})
		}
	}
}

// ltraceCaller is ltrace's "exe->" before a call made from the executable.
var ltraceCaller = regexp.MustCompile(`^[^ (]+->`)

// TestCLIOutArgsLtrace: an output argument of ltrace.conf (read's
// +string[retval], fgets's +string, snprintf's +string2 with the
// variadic arguments after its format) is read when the call returns, as
// ltrace shows it: read(3, "hello-world\n", 4096) = 12, not the buffer
// as it was before the call; a call another line interleaves with is
// left "read(3 <unfinished ...>" and resumed "<... read resumed> ,
// "pipedata", 64) = 8"; write's string3 shows up to its NUL ("ab", not
// "ab\0cd\n"). Lines equal ltrace's, on every engine.
func TestCLIOutArgsLtrace(t *testing.T) {
	need.Tool(t, "ltrace")
	argv := outArgsArgv(t)
	dir := t.TempDir()
	lout := filepath.Join(dir, "ltrace")
	if out, err := exec.Command("ltrace", append([]string{"-f", "-e", "read+fgets+snprintf+write", "-o", lout, "--"}, argv...)...).CombinedOutput(); err != nil {
		t.Fatalf("ltrace: %v\n%s", err, out)
	}
	data, err := os.ReadFile(lout)
	if err != nil {
		t.Fatal(err)
	}
	// The write to the pipe and the read it ends come in either order.
	racing := func(l string) bool { return strings.HasPrefix(l, `write(4, "pipedata"`) }
	var want []string
	for _, l := range ltraceLines(string(data)) {
		if l = ltraceCaller.ReplaceAllString(l, ""); !racing(l) {
			want = append(want, l)
		}
	}
	if len(want) != 7 || want[0] != `read(3, "hello-world\n", 4096) = 12` || !slices.Contains(want, `write(3, "ab", 6) = 6`) {
		t.Fatalf("ltrace's lines are not the fixture's calls: %q", want)
	}
	stdout, code := untraced(t, argv)
	outArgsVariants(t, func(t *testing.T, backend string, extra []string) {
		out := filepath.Join(t.TempDir(), "events")
		args := append([]string{"run", "--backend", backend, "-q", "-f", "-E", "read+fgets+snprintf+write", "-o", out}, extra...)
		r := utap(t, append(append(args, "--"), argv...)...)
		if r.code != code || r.stdout != stdout {
			t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d and %q", r.code, r.stdout, r.stderr, code, stdout)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if got := slices.DeleteFunc(ltraceLines(string(data)), racing); !reflect.DeepEqual(got, want) {
			t.Errorf("utap's lines:\n%s\nltrace's:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		for _, re := range []string{`(?m)^\d+ read\(\d+ <unfinished \.\.\.>$`,
			`(?m)^\d+ <\.\.\. read resumed> , "pipedata", 64\) = 8$`} {
			if !regexp.MustCompile(re).Match(data) {
				t.Errorf("no line matching %s in\n%s", re, data)
			}
		}
	})
}

// TestCLIOutArgsJSON: the return event carries the output argument read
// at the return and the arguments after it; the entry event the ones
// before it.
func TestCLIOutArgsJSON(t *testing.T) {
	argv := outArgsArgv(t)
	outArgsVariants(t, func(t *testing.T, backend string, extra []string) {
		args := append([]string{"run", "--backend", backend, "-q", "--format", "json", "-E", "read"}, extra...)
		r := utap(t, append(append(args, "--"), argv...)...)
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(r.stderr), "\n") {
			var ev struct {
				Kind string
				Args []any
				Ret  any
			}
			if err := json.Unmarshal([]byte(l), &ev); err != nil {
				t.Fatalf("%v: %q", err, l)
			}
			b, _ := json.Marshal([]any{ev.Kind, ev.Args, ev.Ret})
			got = append(got, string(b))
		}
		want := []string{
			`["entry",[3],null]`, `["return",["hello-world\n",4096],12]`,
			`["entry",[3],null]`, `["return",["",4096],0]`,
		}
		if len(got) < len(want) || !reflect.DeepEqual(got[:len(want)], want) {
			t.Errorf("events:\n%s\nwant first:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}

// TestCLIOutArgsPads: in-process, an output argument is read by the
// return pad through the entry's arguments the entry pad kept (read's
// buffer, its size the return value; fgets's, with its size and stream
// past the record), and a sized string at the entry (write's string3) by
// the entry pad: no breakpoint, the lines as above.
func TestCLIOutArgsPads(t *testing.T) {
	need.Root(t)
	argv := outArgsArgv(t)
	out := filepath.Join(t.TempDir(), "events")
	r := utap(t, append([]string{"run", "--backend", "ptrace", "-v", "-f", "-E", "read+write+fgets", "-o", out, "--"}, argv...)...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, re := range []string{`(?m)^utap: read@plt\+0x0 at 0x[0-9a-f]+: its return in-process`, `(?m)^utap: write@plt\+0x0 at 0x[0-9a-f]+: in-process pad`,
		`(?m)^utap: fgets@plt\+0x0 at 0x[0-9a-f]+: its return in-process`} {
		if !regexp.MustCompile(re).MatchString(r.stderr) {
			t.Errorf("no line matching %s in\n%s", re, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "breakpoint:") {
		t.Errorf("a breakpoint:\n%s", r.stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, re := range []string{`(?m)^\d+ read\(3, "hello-world\\n", 4096\) = 12$`, `(?m)^\d+ read\(3, "", 4096\) = 0$`,
		`(?m)^\d+ write\(\d+, "pipedata", 8( <unfinished \.\.\.>|\) = 8)$`, `(?m)^\d+ fgets\("hello-world\\n", 64, 0x[0-9a-f]+\) = 0x[0-9a-f]+$`, `(?m)^\d+ <\.\.\. read resumed> , "pipedata", 64\) = 8$`} {
		if !regexp.MustCompile(re).Match(data) {
			t.Errorf("no line matching %s in\n%s", re, data)
		}
	}
}

// TestCLIBitvecLtrace: ltrace.conf's sigset_t* (bitvec(ulong)*) shows as
// ltrace shows it, the set's bits (sigaddset(<1,12>, SIGINT), sigfillset's
// ~<31-32>, NULL as NULL), on every engine, in pads and on breakpoints.
func TestCLIBitvecLtrace(t *testing.T) {
	need.Tool(t, "ltrace")
	bin := fixture.C(t, "lt_sigset.c")
	out, err := exec.Command("ltrace", "-e", "sig*", "--", bin).CombinedOutput()
	if err != nil {
		t.Fatalf("ltrace: %v\n%s", err, out)
	}
	var want []string
	for _, l := range ltraceLines(string(out)) {
		want = append(want, ltraceCaller.ReplaceAllString(l, ""))
	}
	if len(want) != 8 || want[1] != "sigaddset(<12>, SIGPIPE) = 0" {
		t.Fatalf("ltrace's lines are not the fixture's calls: %q", want)
	}
	outArgsVariants(t, func(t *testing.T, backend string, extra []string) {
		out := filepath.Join(t.TempDir(), "events")
		r := utap(t, append(append([]string{"run", "--backend", backend, "-q", "-E", "sig*", "-o", out}, extra...), "--", bin)...)
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if got := ltraceLines(pidless.ReplaceAllString(string(data), "")); !reflect.DeepEqual(got, want) {
			t.Errorf("utap's lines:\n%s\nltrace's:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}

// TestCLILtraceConfig: ltrace's -F FILE, prototypes in ltrace.conf's
// syntax that come before the system's and DWARF's, on every engine,
// pads and breakpoints; a file that cannot be read is one error line.
func TestCLILtraceConfig(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "my.conf")
	if err := os.WriteFile(conf, []byte("long greet(string, long);\nlong work(hex(long), long);\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := []string{"work(0x1, 2) = 3", "work(0x3, 4) = 7", "work(0x5, 6) = 11", "work(0x4, 3) = 7",
		`greet("hello", 7) = 12`, `greet("world", 8) = 13`}
	outArgsVariants(t, func(t *testing.T, backend string, extra []string) {
		r := utap(t, append(append([]string{"run", "--backend", backend, "-q", "-F", conf, "-e", "work", "-e", "greet"}, extra...), "--", etWork(t), "args")...)
		var got []string
		for _, l := range strings.Split(pidless.ReplaceAllString(r.stderr, ""), "\n") {
			if l != "" && !strings.HasPrefix(l, "+++") {
				got = append(got, l)
			}
		}
		if r.code != 0 || !reflect.DeepEqual(got, want) {
			t.Errorf("exit %d, lines:\n%s\nwant:\n%s\nstderr:\n%s", r.code, strings.Join(got, "\n"), strings.Join(want, "\n"), r.stderr)
		}
	})
	oneErrorLine(t, utap(t, "run", "-F", "/nonexistent.conf", "-e", "work", "--", etWork(t), "args"), "/nonexistent.conf")
}
