//go:build linux && amd64

package enginetest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
)

// TestSyscallParity: both engines print the same system call lines for the
// same command (after joining unfinished/resumed pairs and masking pids
// and addresses, as the strace corpus does).
func TestSyscallParity(t *testing.T) {
	need.Uprobes(t)
	bin := fixture.C(t, "sys_calls.c")
	var got [][]string
	for _, b := range backends {
		out := filepath.Join(t.TempDir(), "out")
		r := utap(t, "run", "--backend", b.name, "-q", "-f", "-o", out,
			"-e", "trace=openat,read,write,close,wait4,exit_group,rt_sigaction", "--", bin)
		if r.code != 0 || r.stdout != "done 3\n" {
			t.Fatalf("%s: exit %d, stdout %q, stderr %q", b.name, r.code, r.stdout, r.stderr)
		}
		text, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		lines := straceLines(string(text))
		for i, l := range lines {
			// Which pid came first differs with the engine's timing.
			lines[i] = anyPID.ReplaceAllString(l, "P")
		}
		slices.Sort(lines)
		got = append(got, lines)
	}
	if !slices.Equal(got[0], got[1]) {
		t.Errorf("ptrace and uprobe differ:\nptrace:\n%s\nuprobe:\n%s", strings.Join(got[0], "\n"), strings.Join(got[1], "\n"))
	}
	if len(got[0]) < 20 {
		t.Errorf("only %d lines", len(got[0]))
	}
}

// TestSyscallBadInput: a system call that does not exist, a class that
// does not exist, an argument a call does not have: one line, exit 2,
// nothing started.
func TestSyscallBadInput(t *testing.T) {
	need.Root(t)
	marker := filepath.Join(t.TempDir(), "ran")
	for _, c := range []struct {
		spec string
		want []string
	}{
		{"syscall:opnat", []string{`unknown system call "opnat"`, "openat"}},
		{"trace=opnat", []string{`unknown system call "opnat"`, "openat"}},
		{"syscall:%bogus", []string{`"%bogus"`, "%file", "%network"}},
		{"syscall:close if arg3 == 1", []string{"close has no arg3", "it takes 1"}},
		{"syscall:zzz*", []string{`"zzz*"`}},
	} {
		oneErrorLine(t, utap(t, "run", "-e", c.spec, "--", "touch", marker), c.want...)
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("%s: the command ran", c.spec)
		}
	}
}

// TestSyscallJSONAndSummary: JSON has one object per call with the raw
// arguments, the errno name and strace's text; -c counts calls and errors
// per system call under strace's heading.
func TestSyscallJSONAndSummary(t *testing.T) {
	bin := fixture.C(t, "sys_calls.c")
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			b.need(t)
			r := utap(t, "run", "--backend", b.name, "-q", "--format", "json", "-e", "trace=openat", "--", bin)
			var enoent bool
			for _, l := range strings.Split(strings.TrimSpace(r.stderr), "\n") {
				var ev struct {
					Kind    string
					Syscall *struct {
						Nr    int
						Args  []uint64
						Ret   *int64
						Errno *string
						Text  string
					}
				}
				if err := json.Unmarshal([]byte(l), &ev); err != nil {
					t.Fatalf("%q: %v", l, err)
				}
				if ev.Syscall == nil {
					continue
				}
				if ev.Kind != "return" || len(ev.Syscall.Args) != 4 || ev.Syscall.Ret == nil {
					t.Errorf("%s", l)
				}
				if ev.Syscall.Errno != nil && *ev.Syscall.Errno == "ENOENT" &&
					strings.Contains(ev.Syscall.Text, `"/utap-nonexistent/file", O_RDONLY) = -1 ENOENT (No such file or directory)`) {
					enoent = true
				}
			}
			if !enoent {
				t.Errorf("no ENOENT openat in:\n%s", r.stderr)
			}
			r = utap(t, "run", "--backend", b.name, "-q", "-c", "-e", "trace=openat,close", "--", bin)
			if !strings.Contains(r.stderr, " syscall\n") || !regexpMatch(`(?m)^ *[0-9.]+ +[0-9.]+ +[0-9.]+ +\d+ +1 .* openat$`, r.stderr) {
				t.Errorf("-c:\n%s", r.stderr)
			}
		})
	}
}

var anyPID = regexp.MustCompile(`\bP\d+\b`)

func regexpMatch(re, s string) bool { return regexp.MustCompile(re).MatchString(s) }

// TestSyscallWithLibraryProbes: -S with a probe in a library picks the
// ptrace engine under auto (the uprobe engine would go in after the
// loader's system calls), and says so; the loader's calls are there.
func TestSyscallWithLibraryProbes(t *testing.T) {
	need.Root(t)
	r := utap(t, "run", "-S", "-e", "libc:malloc", "--", "cat", "/etc/hostname")
	if r.code != 0 || !strings.Contains(r.stderr, "utap: backend ptrace: with probes in libraries") ||
		!regexpMatch(`(?m)^\[pid \d+\] openat\(AT_FDCWD, "/etc/ld.so.cache", O_RDONLY\|O_CLOEXEC\) += 3$`, r.stderr) ||
		!regexpMatch(`(?m)^\[pid \d+\] malloc\(\d+`, r.stderr) {
		t.Errorf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
}

// TestSyscallDyingThread: a thread killed inside its read (the process
// exits under it) shows the read as never returning, on both engines.
func TestSyscallDyingThread(t *testing.T) {
	bin := fixture.C(t, "pt_sys.c")
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			b.need(t)
			r := utap(t, "run", "--backend", b.name, "-q", "-e", "trace=read,exit_group", "--", bin, "blocked")
			lines := strings.Join(straceLines(r.stderr), "\n")
			if r.code != 0 || !regexpMatch(`(?m)^read\(3, 0x\?, 1\) = \?$`, lines) || !regexpMatch(`(?m)^exit_group\(0\) = \?$`, lines) {
				t.Errorf("exit %d, lines:\n%s", r.code, lines)
			}
		})
	}
}
