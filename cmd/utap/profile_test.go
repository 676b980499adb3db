//go:build linux && amd64

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/utap/utap/internal/fixture"
)

// TestRunProfileFlags: the profile formats refuse, in one line, what
// cannot go with them.
func TestRunProfileFlags(t *testing.T) {
	bin := fixture.C(t, "cli_work.c")
	oneErrorLine(t, utap(t, "run", "--format", "pprof", "-e", "work", "--", bin), "-o FILE")
	oneErrorLine(t, utap(t, "run", "--format", "flamegraph", "-e", "work", "--", bin), "-o FILE")
	oneErrorLine(t, utap(t, "run", "--weight", "time", "-e", "work", "--", bin), "--weight")
	oneErrorLine(t, utap(t, "run", "--format", "folded", "--weight", "bytes", "-e", "work", "--", bin), "bytes")
	oneErrorLine(t, utap(t, "run", "--format", "folded", "--weight", "time", "--entry-only", "-e", "work", "--", bin), "--entry-only")
	oneErrorLine(t, utap(t, "run", "--format", "folded", "-c", "-e", "work", "--", bin), "-c")
}

// TestRunFolded: --format folded implies -k and counts each call once,
// by calls or by its time.
func TestRunFolded(t *testing.T) {
	bin := fixture.C(t, "cli_work.c")
	for _, weight := range []string{"calls", "time"} {
		out := filepath.Join(t.TempDir(), "folded")
		r := utap(t, "run", "-q", "--backend", "ptrace", "--format", "folded", "--weight", weight, "-o", out, "-e", "work", "--", bin, "3", "7")
		if r.code != 7 || r.stderr != "" {
			t.Fatalf("exit %d stderr %q; want 7, nothing", r.code, r.stderr)
		}
		data, _ := os.ReadFile(out)
		lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		if len(lines) != 1 || !strings.Contains(lines[0], ";main;work ") {
			t.Fatalf("folded:\n%s", data)
		}
		if weight == "calls" && !strings.HasSuffix(lines[0], ";main;work 3") {
			t.Errorf("folded:\n%s\nwant 3 calls of work under main", data)
		}
	}
}
