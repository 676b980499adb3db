//go:build linux && amd64

package enginetest

import (
	"os/exec"
	"strings"
	"testing"
)

// TestCLIKeepsIgnoredSignals: a command run under nohup (SIGHUP ignored)
// or in the background of a script (SIGINT and SIGQUIT ignored) keeps
// them ignored when traced, as under strace: on bb21bac they came back
// as default (SigIgn 0x1/0x6 -> 0), and nohup no longer protected it.
func TestCLIKeepsIgnoredSignals(t *testing.T) {
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			b.need(t)
			for _, sigs := range []string{"HUP", "INT QUIT", "HUP INT QUIT", ""} {
				cmd := "grep SigIgn /proc/self/status"
				want := sigIgn(t, "trap '' "+sigs+"; exec "+cmd)
				got := sigIgn(t, "trap '' "+sigs+"; exec "+utapBin+" run -q --backend "+b.name+" -e syscall:getppid -o /dev/null -- "+cmd)
				if got != want {
					t.Errorf("ignored %q: traced %q, untraced %q", sigs, got, want)
				}
			}
		})
	}
}

func sigIgn(t *testing.T, script string) string {
	t.Helper()
	out, err := exec.Command("sh", "-c", script).Output()
	if err != nil {
		t.Fatalf("%s: %v", script, err)
	}
	return strings.TrimSpace(string(out))
}
