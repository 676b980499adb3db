//go:build linux && amd64

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
)

func TestRunBadInput(t *testing.T) {
	bin := fixture.C(t, "cli_work.c")
	oneErrorLine(t, utap(t, "run", "-e", "work(a,", "--", bin), "column")
	oneErrorLine(t, utap(t, "run", "-e", "nosuchfunc", "--", bin), "nosuchfunc")
	oneErrorLine(t, utap(t, "run", "-e", "work+0x1", "--", bin), "work")
	oneErrorLine(t, utap(t, "run", "-e", "work", "--", "/nonexistent/cmd"), "/nonexistent/cmd")
	oneErrorLine(t, utap(t, "run", "-e", "trace=none", "--", bin), "-e SPEC") // no probe at all is strace's default instead
	oneErrorLine(t, utap(t, "run", "-e", "work", "--backend", "dtrace", "--", bin), "dtrace")
	oneErrorLine(t, utap(t, "attach", "-p", "999999", "-e", "work"), "999999")
	oneErrorLine(t, utap(t, "attach", "-p", "abc", "-e", "work"), "abc")
}

func TestRunPassesThrough(t *testing.T) {
	bin := fixture.C(t, "cli_work.c")
	for _, backend := range []string{"ptrace", "uprobe"} {
		t.Run(backend, func(t *testing.T) {
			if backend == "uprobe" {
				need.Uprobes(t)
			}
			out := filepath.Join(t.TempDir(), "events")
			r := utap(t, "run", "-q", "--backend", backend, "-o", out, "-e", "work(a, b:x)", "--", bin, "3", "7")
			if r.code != 7 || r.stdout != "sum=17\n" || r.stderr != "" {
				t.Fatalf("exit %d stdout %q stderr %q; want 7, sum=17, nothing", r.code, r.stdout, r.stderr)
			}
			got, _ := os.ReadFile(out)
			// One line per call, with its return value (a return twin by
			// default), and the process's end as ltrace shows it.
			want := "work(0, 0x0) = 0\nwork(1, 0x2) = 4\nwork(2, 0x4) = 8\n+++ exited (status 7) +++\n"
			if stripPIDs(string(got)) != want {
				t.Errorf("events:\n%s\nwant\n%s", got, want)
			}
		})
	}
}

func TestRunProbesFileJSONAndSummary(t *testing.T) {
	bin := fixture.C(t, "cli_work.c")
	file := filepath.Join(t.TempDir(), "probes")
	os.WriteFile(file, []byte("# two probes\nwork(arg1) if arg1 >= 3\n\ngreet(str(arg1))\n"), 0o644)
	r := utap(t, "run", "-q", "--backend", "ptrace", "--probes", file, "--format", "json", "--", bin, "5")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	// greet gets a return twin (an entry probe without condition); work's
	// condition reads arguments, so it gets none.
	if len(lines) != 4 {
		t.Fatalf("want 4 JSON lines (work 3, work 4, greet, greet's return), got %q", r.stderr)
	}
	var ev struct {
		Func string `json:"func"`
		Args []any  `json:"args"`
	}
	if err := json.Unmarshal([]byte(lines[2]), &ev); err != nil || ev.Func != "greet" || ev.Args[0] != "world" {
		t.Errorf("last event %q: %+v %v", lines[2], ev, err)
	}

	r = utap(t, "run", "-q", "-c", "--backend", "ptrace", "-e", "work", "-e", "greet", "--", bin, "5")
	if r.code != 0 || !strings.Contains(r.stderr, "work") || !regexp.MustCompile(`\b5\b.*work`).MatchString(r.stderr) {
		t.Errorf("-c summary: exit %d\n%s", r.code, r.stderr)
	}
}

var pidPrefix = regexp.MustCompile(`(?m)^\[pid \d+\] `)

func stripPIDs(s string) string { return pidPrefix.ReplaceAllString(s, "") }

// TestRunDurations: -T shows the call's time after its return value, on
// both engines.
func TestRunDurations(t *testing.T) {
	bin := fixture.C(t, "cli_work.c")
	for _, backend := range []string{"ptrace", "uprobe"} {
		t.Run(backend, func(t *testing.T) {
			if backend == "uprobe" {
				need.Uprobes(t)
			}
			r := utap(t, "run", "-q", "-T", "--backend", backend, "-e", "work(a, b)", "--", bin, "2")
			want := regexp.MustCompile(`^work\(0, 0\) = 0 <0\.\d{6}>\nwork\(1, 2\) = 4 <0\.\d{6}>\n\+\+\+ exited \(status 0\) \+\+\+\n$`)
			if r.code != 0 || !want.MatchString(stripPIDs(r.stderr)) {
				t.Errorf("exit %d, events:\n%s", r.code, r.stderr)
			}
		})
	}
}
