//go:build linux && amd64

package enginetest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/utap/utap/internal/need"
)

// The hold of a followed exec (until the new image's probes are in) is
// seen by no one (#25): a parent under -f gets the SIGCHLDs strace -f
// shows it, no CLD_STOPPED then CLD_CONTINUED, and a shell's wait on $!
// gets the child's exit status.

// sigLines are the signal lines of a strace-format log, each as its
// signal and si_code: pids, times and order among processes left out.
var sigLineRE = regexp.MustCompile(`--- (SIG\w+) \{si_signo=\w+, si_code=(\w+)`)

func sigLines(log string) []string {
	var out []string
	for _, m := range sigLineRE.FindAllStringSubmatch(log, -1) {
		out = append(out, m[1]+" "+m[2])
	}
	slices.Sort(out)
	return out
}

func TestCLIExecHoldUnseen(t *testing.T) {
	need.Tool(t, "strace")
	for _, script := range []string{
		"ls /nonexistent; true",
		"ls /nonexistent & wait $!; echo status=$?",
	} {
		argv := []string{"sh", "-c", script}
		stdout, code := untraced(t, argv)
		dir := t.TempDir()
		ref := filepath.Join(dir, "strace")
		if b, err := exec.Command("strace", append([]string{"-f", "-qq", "-e", "trace=execve", "-o", ref}, argv...)...).CombinedOutput(); err != nil {
			t.Fatalf("strace: %v\n%s", err, b)
		}
		want := readFile(t, ref)
		for _, b := range backends {
			t.Run(b.name+"/"+script, func(t *testing.T) {
				b.need(t)
				out := filepath.Join(t.TempDir(), "trace")
				r := utap(t, append([]string{"run", "--backend", b.name, "-q", "-f", "-e", "trace=execve", "-o", out, "--"}, argv...)...)
				if r.stdout != stdout || r.code != code {
					t.Fatalf("exit %d, stdout %q; want exit %d, stdout %q", r.code, r.stdout, code, stdout)
				}
				got := readFile(t, out)
				if g, w := sigLines(got), sigLines(want); !slices.Equal(g, w) {
					t.Errorf("signals %q, strace -f shows %q\n%s", g, w, got)
				}
			})
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCLIExecHoldUnseenAttached: attached with -f to a shell that runs
// commands, utap holds each exec of its children without a stop the shell
// can see: no CLD_STOPPED (the kernel engine seizes the processes for
// their exec events, as in run mode, instead of stopping them).
func TestCLIExecHoldUnseenAttached(t *testing.T) {
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			b.need(t)
			dir := t.TempDir()
			gofile, out := filepath.Join(dir, "go"), filepath.Join(dir, "trace")
			sh := exec.Command("bash", "-c", `while [ ! -e "$1" ]; do sleep 0.02; done`, "sh", gofile)
			if err := sh.Start(); err != nil {
				t.Fatal(err)
			}
			defer sh.Process.Kill()
			cmd, stderr := attachWaiting(t, out, "-q", "-f", "--backend", b.name, "-p", fmt.Sprint(sh.Process.Pid), "-o", out, "-e", "trace=execve")
			if err := os.WriteFile(gofile, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := sh.Wait(); err != nil {
				t.Fatalf("the shell: %v", err)
			}
			if err := cmd.Wait(); err != nil {
				t.Fatalf("utap: %v: %s", err, stderr.String())
			}
			got := readFile(t, out)
			if !strings.Contains(got, `execve("/usr/bin/sleep"`) || strings.Contains(got, "CLD_STOPPED") || strings.Contains(stderr.String(), "SIGSTOP") {
				t.Errorf("stderr %q\n%s", stderr.String(), got)
			}
		})
	}
}
