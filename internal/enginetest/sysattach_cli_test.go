//go:build linux && amd64

package enginetest

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/utap/utap/internal/fixture"
)

// TestSysAttach: system calls of a process utap attaches to, on pads and
// traps (ptrace/padsystrap.go), on stops at every call, and on the kernel
// engine: the same lines (getppid from libc's wrapper, a pad, and from
// syscall(), a trap; a read of a pipe interrupted by a signal and
// restarted), a fork child not followed that lives, with jit code
// written at run time whose call is seen too (the process goes back to
// stopping at every call, said); a detach while a thread is blocked in a
// read made from a trap's trampoline, after which the read goes on; the
// code as before the attach, and nothing of utap's left mapped.
func TestSysAttach(t *testing.T) {
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	bin := fixture.C(t, "sys_attach.c")
	for _, jit := range []bool{false, true} {
		var first []string
		for _, m := range sysModes {
			t.Run(fmt.Sprintf("%s/jit=%v", m.name, jit), func(t *testing.T) {
				m.need(t)
				lines, stderr := sysAttachRun(t, bin, jit, m.args)
				if n, want := countPrefix(lines, "getppid() "), 4*50+1+map[bool]int{true: 1}[jit]; n != want {
					t.Errorf("%d getppid lines, want %d", n, want)
				}
				if m.name == "ptrace" {
					for _, want := range []string{"syscall instructions trapped", "getppid at 0x", "a dispatch pad at", "mmap at 0x", "a watch pad at"} {
						if !strings.Contains(stderr, want) {
							t.Errorf("-v does not say %q:\n%s", want, stderr)
						}
					}
					if said := strings.Contains(stderr, "makes memory executable"); said != jit {
						t.Errorf("said the process writes code: %v, want %v:\n%s", said, jit, stderr)
					}
				}
				if first == nil {
					first = lines
				} else if !slices.Equal(lines, first) {
					t.Errorf("lines differ from %s's:\n%s\nwant:\n%s", sysModes[0].name, strings.Join(lines, "\n"), strings.Join(first, "\n"))
				}
			})
		}
	}
}

// sysAttachRun runs sys_attach under `utap attach -v` with args, detaches
// while it is blocked in its last read, checks it then runs on as before,
// and returns its getppid, stdin and pipe read and SIGUSR1 lines
// (straceLines) and utap's stderr.
func sysAttachRun(t *testing.T, bin string, jit bool, args []string) ([]string, string) {
	t.Helper()
	argv := []string{bin, "50"}
	if jit {
		argv = append(argv, "jit")
	}
	r := startAttached(t, argv, "trace=getppid,read,write", args)
	cmd, u, in, out, stdout, before := r.cmd, r.u, r.in, r.out, r.stdout, r.before
	sysWaitFor(t, func() bool { return strings.Contains(fileText(stdout).String(), "done\n") })
	sysWaitFor(t, func() bool {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/syscall", cmd.Process.Pid))
		return strings.HasPrefix(string(b), "0 ")
	})
	u.Process.Signal(syscall.SIGTERM)
	if err := u.Wait(); err != nil {
		t.Fatalf("utap: %v\n%s", err, r.stderr.String())
	}
	after := snapshot(t, cmd.Process.Pid)
	in.Write([]byte("bye\n"))
	in.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("after the detach: %v; output %q", err, fileText(stdout).String())
	}
	if got := fileText(stdout).String(); got != "ready\nchild 0\ndone\ngot 4\n" {
		t.Errorf("output %q", got)
	}
	// Its threads and the pipe's mappings came since: the code of what
	// was mapped before must be as it was, and nothing of utap's left.
	for l := range before.code {
		if _, ok := after.code[l]; !ok {
			t.Errorf("mapping gone: %s", l)
		}
	}
	before.maps = after.maps
	sameImage(t, before, after, nil)
	for l := range after.code {
		if _, ok := before.code[l]; !ok && !(jit && strings.Contains(l, " rwxp ")) {
			t.Errorf("executable mapping left: %s", l)
		}
	}
	if os.Getenv("UTAP_DUMP") != "" {
		t.Logf("trace:\n%s", fileText(out).String())
	}
	var keep []string
	for _, l := range straceUnprefixed(fileText(out).String()) {
		if strings.HasPrefix(l, "getppid(") || strings.HasPrefix(l, `read(0, "go`) || strings.HasPrefix(l, "read(4,") ||
			strings.HasPrefix(l, "--- SIGUSR1") {
			keep = append(keep, l)
		}
	}
	return keep, r.stderr.String()
}

// attachedRun is a fixture that prints "ready", then writes to /dev/null
// until a line comes on stdin, traced by `utap attach -v`.
type attachedRun struct {
	cmd, u      *exec.Cmd
	in          io.WriteCloser
	out, stdout string // the trace, the fixture's output
	stderr      strings.Builder
	before      image // the fixture's image before the attach
}

// startAttached starts argv, and once it is ready utap attach with args
// and -e spec; once the trace shows a write (the probes are in), the line
// goes to its stdin.
func startAttached(t *testing.T, argv []string, spec string, args []string) *attachedRun {
	t.Helper()
	dir := t.TempDir()
	r := &attachedRun{out: filepath.Join(dir, "trace"), stdout: filepath.Join(dir, "stdout")}
	r.cmd = exec.Command(argv[0], argv[1:]...)
	var err error
	if r.in, err = r.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(r.stdout)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	r.cmd.Stdout = f
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.cmd.Process.Kill() })
	sysWaitFor(t, func() bool { return fileText(r.stdout).String() == "ready\n" })
	r.before = snapshot(t, r.cmd.Process.Pid)
	r.u = exec.Command(utapBin, append(append([]string{"attach", "-v", "-o", r.out}, args...),
		"-e", spec, "-p", fmt.Sprint(r.cmd.Process.Pid))...)
	r.u.Stderr = &r.stderr
	if err := r.u.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.u.Process.Kill() })
	sysWaitFor(t, func() bool { return strings.Contains(fileText(r.out).String(), "write(") })
	r.in.Write([]byte("go\n"))
	return r
}

// maskedPid is a line's "[pid P1] " after straceLines.
var maskedPid = regexp.MustCompile(`^\[pid P\d+\] `)

// countPrefix counts the lines that start with prefix.
func countPrefix(lines []string, prefix string) int {
	n := 0
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}

// TestSysAttachGo: a Go program, whose calls all go through its
// runtime's `syscall` of a number in a register: attached with a few
// calls probed, that site takes a dispatch pad (the others, getpid here,
// run in-process; the probed stop at its trap), under goroutines on four
// threads, the GC and SIGURG preemption; every getppid shown, on the
// three paths, and the program ends as untraced.
func TestSysAttachGo(t *testing.T) {
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	bin := fixture.Go(t, "sys_attach_go")
	for _, m := range sysModes {
		t.Run(m.name, func(t *testing.T) {
			m.need(t)
			r := startAttached(t, []string{bin, "300"}, "trace=getppid,write", m.args)
			cmd, u, out, stdout, stderr := r.cmd, r.u, r.out, r.stdout, &r.stderr
			if err := cmd.Wait(); err != nil {
				t.Fatalf("%v; output %q", err, fileText(stdout).String())
			}
			if err := u.Wait(); err != nil {
				t.Fatalf("utap: %v\n%s", err, stderr.String())
			}
			if got := fileText(stdout).String(); got != "ready\ndone\n" {
				t.Errorf("output %q", got)
			}
			if n := countPrefix(straceUnprefixed(fileText(out).String()), "getppid() "); n != 4*300 {
				t.Errorf("%d getppid lines, want %d", n, 4*300)
			}
			if m.name == "ptrace" && !strings.Contains(stderr.String(), "a dispatch pad at") {
				t.Errorf("-v shows no dispatch pad:\n%s", stderr.String())
			}
		})
	}
}

// straceUnprefixed is straceLines without their "[pid Pn] ".
func straceUnprefixed(text string) []string {
	var ls []string
	for _, l := range straceLines(text) {
		ls = append(ls, maskedPid.ReplaceAllString(l, ""))
	}
	return ls
}
