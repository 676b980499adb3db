//go:build linux && amd64

package enginetest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
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
