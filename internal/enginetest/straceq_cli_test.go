//go:build linux && amd64

package enginetest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCLIStraceQualifiers: strace's -z, -Z, -e status=, -e signal=,
// trace=/REGEX and ?NAME, -ff, and -S beside ltrace's -E, on both engines.
func TestCLIStraceQualifiers(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			b.need(t)
			dir := t.TempDir()
			out := filepath.Join(dir, "out")
			cat := []string{"cat", "/nonexistent", "/etc/hostname"}
			run := func(args ...string) []string {
				t.Helper()
				a := append([]string{"run", "--backend", b.name, "-q", "-o", out}, args...)
				r := utap(t, append(append(a, "--"), cat...)...)
				if r.code != 1 {
					t.Fatalf("%q: exit %d, stderr %q", args, r.code, r.stderr)
				}
				return straceLines(fileText(out).String())
			}
			calls := func(lines []string) (ok, failed int) {
				for _, l := range lines {
					switch {
					case strings.HasPrefix(l, "openat("), strings.HasPrefix(l, "read("):
						if strings.Contains(l, ") = -1 ") {
							failed++
						} else {
							ok++
						}
					}
				}
				return
			}
			if ok, failed := calls(run("-e", "trace=openat,read")); ok == 0 || failed == 0 {
				t.Fatalf("unfiltered: %d succeeded, %d failed", ok, failed)
			}
			for _, c := range []struct {
				args           []string
				wantOK, wantEr bool
			}{
				{[]string{"-z", "-e", "trace=openat,read"}, true, false},
				{[]string{"-Z", "-e", "trace=openat,read"}, false, true},
				{[]string{"-e", "status=failed", "-e", "trace=/^(openat|read)$"}, false, true},
				{[]string{"-e", "status=!failed", "-e", "trace=openat,read,?no_such_call"}, true, false},
			} {
				ok, failed := calls(run(c.args...))
				if (ok > 0) != c.wantOK || (failed > 0) != c.wantEr {
					t.Errorf("%q: %d succeeded, %d failed", c.args, ok, failed)
				}
			}
			for _, l := range run("-S", "-e", "signal=none") {
				if strings.HasPrefix(l, "--- SIG") {
					t.Errorf("signal=none: %s", l)
				}
			}
			// -S beside ltrace's -E keeps the system calls (on bb21bac -E
			// took every spec's place).
			if ok, _ := calls(run("-S", "-E", "fclose")); ok == 0 {
				t.Errorf("-S -E fclose: no system call shown")
			}
			// -ff: each process's lines in FILE.PID.
			ff := filepath.Join(dir, "ff")
			r := utap(t, "run", "--backend", b.name, "-q", "-ff", "-o", ff, "-e", "trace=execve,exit_group", "--", "sh", "-c", "ls /nonexistent 2>/dev/null; exit 3")
			files, _ := filepath.Glob(ff + ".*")
			if r.code != 3 || len(files) < 2 {
				t.Fatalf("-ff: exit %d, files %q, stderr %q", r.code, files, r.stderr)
			}
			for _, f := range files {
				text, _ := os.ReadFile(f)
				if !strings.Contains(string(text), "execve(") || strings.Contains(string(text), "[pid ") {
					t.Errorf("%s: %q", f, text)
				}
			}
		})
	}
	for _, args := range [][]string{{"-e", "abbrev=no_such_call"}, {"-e", "fault=openat"}, {"-z", "-Z"}} {
		r := utap(t, append(append([]string{"run"}, args...), "-S", "--", "true")...)
		oneErrorLine(t, r, args[len(args)-1])
	}
}

// TestCLIStracePath: strace's -P PATH shows only the calls that name the
// path or an fd open on it, the fd followed from the open to its close
// (the lines come after the call: /proc may name a later file by then),
// on both engines; alone, -P traces every call as strace does.
func TestCLIStracePath(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			b.need(t)
			r := utap(t, "run", "-q", "--backend", b.name, "-P", "/etc/hostname", "--", "cat", "/etc/hostname")
			var names []string
			for _, l := range strings.Split(strings.TrimSpace(r.stderr), "\n") {
				if i := strings.IndexByte(l, '('); i > 0 && !strings.HasPrefix(l, "+++") {
					names = append(names, l[:i])
				}
			}
			got := strings.Join(names, " ")
			if r.code != 0 || !strings.HasPrefix(got, "openat ") || !strings.HasSuffix(got, " close") || !strings.Contains(got, " read ") ||
				strings.Contains(got, "mmap") || strings.Contains(got, "execve") {
				t.Errorf("exit %d, calls %q:\n%s", r.code, got, r.stderr)
			}
		})
	}
}

// TestCLIStraceDefault: with no probe, or only qualifiers, utap traces
// every system call as strace does with none (strace CMD, strace -c,
// strace -e signal=none CMD), on both engines; trace=none selects
// nothing, said in one line.
func TestCLIStraceDefault(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			b.need(t)
			for _, args := range [][]string{{}, {"-e", "signal=none"}} {
				r := utap(t, append(append([]string{"run", "-q", "--backend", b.name}, args...), "--", "cat", "/etc/hostname")...)
				if r.code != 0 || !strings.Contains(r.stderr, `openat(AT_FDCWD, "/etc/hostname", O_RDONLY) = 3`) ||
					!strings.Contains(r.stderr, "exit_group(0)") {
					t.Errorf("%q: exit %d:\n%s", args, r.code, r.stderr)
				}
			}
			r := utap(t, "run", "-q", "--backend", b.name, "-c", "--", "cat", "/etc/hostname")
			if r.code != 0 || !regexp.MustCompile(`(?m)^ *[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9]+ .* openat$`).MatchString(r.stderr) {
				t.Errorf("-c: exit %d:\n%s", r.code, r.stderr)
			}
		})
	}
	r := utap(t, "run", "-e", "trace=none", "--", "true")
	oneErrorLine(t, r, "no probes")
}

// TestCLIStraceDetached: a call still running when an attached trace
// ends shows as strace shows it, `read(0,  <detached ...>`, not as
// returning the restart code the detach made the kernel use; the call
// goes on untraced (cat still echoes), on both engines.
func TestCLIStraceDetached(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			b.need(t)
			cat := exec.Command("cat")
			in, err := cat.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			out, err := cat.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cat.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { in.Close(); cat.Wait() }()
			fmt.Fprintln(in, "before")
			lines := bufio.NewScanner(out)
			if !lines.Scan() || lines.Text() != "before" {
				t.Fatalf("cat said %q", lines.Text())
			}
			r := utap(t, "attach", "-q", "--backend", b.name, "-p", fmt.Sprint(cat.Process.Pid), "-e", "trace=read", "--duration", "500ms")
			if r.code != 0 || !strings.Contains(r.stderr, "read(0,  <detached ...>\n") || strings.Contains(r.stderr, "ERESTART") {
				t.Errorf("exit %d:\n%s", r.code, r.stderr)
			}
			fmt.Fprintln(in, "after")
			if !lines.Scan() || lines.Text() != "after" {
				t.Fatalf("cat said %q after the trace", lines.Text())
			}
		})
	}
}

// TestCLIStraceFlagsMore: strace's -xx, -a, -qq, -e quiet=exit,
// --always-show-pid, -Y, -u, -E VAR=VAL and long options, and ltrace's
// -b, on both engines.
func TestCLIStraceFlagsMore(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			b.need(t)
			run := func(args ...string) cliResult {
				return utap(t, append([]string{"run", "-q", "--backend", b.name}, args...)...)
			}
			for _, c := range []struct {
				args []string
				want string // a regexp the trace matches
				not  string // one it must not
			}{
				{[]string{"-xx", "-e", "trace=openat", "--", "cat", "/etc/hostname"},
					`openat\(AT_FDCWD, "\\x2f\\x65\\x74\\x63\\x2f\\x68\\x6f\\x73\\x74\\x6e\\x61\\x6d\\x65", O_RDONLY\) += 3`, ""},
				{[]string{"-a", "60", "-e", "trace=close", "--", "true"}, `(?m)^close\(3\) {52}= 0$`, ""},
				{[]string{"-a", "0", "-e", "trace=close", "--", "true"}, `(?m)^close\(3\) = 0$`, ""},
				{[]string{"-qq", "-e", "trace=close", "--", "true"}, `close\(3\)`, `exited`},
				{[]string{"-e", "quiet=exit", "-e", "trace=close", "--", "true"}, `close\(3\)`, `exited`},
				{[]string{"--always-show-pid", "-e", "trace=close", "--", "true"}, `(?m)^\[pid \d+\] close\(3\) +=`, ""},
				// strace's long options: --trace=SET is -e trace=SET.
				{[]string{"--status=successful", "--syscall-times", "--", "cat", "/etc/hostname"},
					`openat\(AT_FDCWD, "/etc/hostname", O_RDONLY\) += 3 <[0-9.]+>`, `ENOENT`},
				{[]string{"--trace=close", "--columns=0", "--", "true"}, `(?m)^close\(3\) = 0$`, `openat`},
				// ltrace's -b: no signal lines.
				{[]string{"-b", "-e", "trace=kill", "--", "sh", "-c", "kill -CHLD $$"}, `kill\(`, `--- SIGCHLD`},
				{[]string{"-e", "trace=kill", "--", "sh", "-c", "kill -CHLD $$"}, `--- SIGCHLD`, ``},
			} {
				r := run(c.args...)
				if r.code != 0 || !regexp.MustCompile(c.want).MatchString(r.stderr) ||
					c.not != "" && regexp.MustCompile(c.not).MatchString(r.stderr) {
					t.Errorf("%q: exit %d, want %s, not %q:\n%s", c.args, r.code, c.want, c.not, r.stderr)
				}
			}
			// -Y: the thread's name, the new one after an exec; the
			// kernel engine's lines come when a short command is gone.
			r := run("-f", "-Y", "-e", "trace=close", "--", "sh", "-c", "true; /bin/true")
			if name := regexp.MustCompile(`(?m)^\[pid \d+<true>\] close\(3\) +=`).MatchString(r.stderr); r.code != 0 || !name && b.name == "ptrace" {
				t.Errorf("-Y: exit %d:\n%s", r.code, r.stderr)
			}
			r = run("-u", "nobody", "-e", "trace=geteuid", "--", "id", "-u")
			if r.code != 0 || r.stdout != "65534\n" || !strings.Contains(r.stderr, "geteuid()") {
				t.Errorf("-u nobody: exit %d, stdout %q:\n%s", r.code, r.stdout, r.stderr)
			}
			r = run("-E", "UTAP_T=set", "-E", "HOME=/nowhere", "-e", "trace=exit_group", "--", "sh", "-c", "echo $UTAP_T $HOME")
			if r.code != 0 || r.stdout != "set /nowhere\n" {
				t.Errorf("-E VAR=VAL: exit %d, stdout %q:\n%s", r.code, r.stdout, r.stderr)
			}
		})
	}
	oneErrorLine(t, utap(t, "run", "-u", "no_such_user", "--", "true"), "no_such_user")
	oneErrorLine(t, utap(t, "run", "-e", "quiet=bogus", "--", "true"), "bogus")
	oneErrorLine(t, utap(t, "attach", "-u", "nobody", "-p", "1"), "run -u")
	oneErrorLine(t, utap(t, "attach", "-E", "A=b", "-p", "1"), "run -E")
	oneErrorLine(t, utap(t, "run", "-b", "execve", "--", "true"), "-b execve")
}
