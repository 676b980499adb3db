// Package need lets tests state the capabilities they require. A missing
// capability skips the test with the reason, except under CI (CI=true),
// where these machines must have it and the test fails instead.
package need

import (
	"os"
	"os/exec"
	"testing"
)

func missing(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true and %s", why)
	}
	t.Skip(why)
}

// Root requires uid 0 (kernel uprobes, tracefs, attaching to others' processes).
func Root(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		missing(t, "not root: this test needs uid 0")
	}
}

// Tool requires a program on PATH.
func Tool(t testing.TB, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		missing(t, name+" is not on PATH (apt-get install it; .ci/run does)")
	}
}

// Uprobes requires kernel uprobe support (the uprobe PMU).
func Uprobes(t testing.TB) {
	t.Helper()
	Root(t)
	if _, err := os.Stat("/sys/bus/event_source/devices/uprobe/type"); err != nil {
		missing(t, "the kernel has no uprobe PMU (CONFIG_UPROBE_EVENTS)")
	}
}

// TracefsUprobes requires tracefs's uprobe_events (root) and returns the
// tracefs directory.
func TracefsUprobes(t testing.TB) string {
	t.Helper()
	Root(t)
	for _, dir := range []string{"/sys/kernel/tracing", "/sys/kernel/debug/tracing"} {
		if _, err := os.Stat(dir + "/uprobe_events"); err == nil {
			return dir
		}
	}
	missing(t, "no tracefs uprobe_events (mount tracefs; CONFIG_UPROBE_EVENTS)")
	return ""
}
