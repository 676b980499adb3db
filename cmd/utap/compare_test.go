//go:build linux && amd64

package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/utap/utap/internal/need"
)

// TestCompareEvents: `utap compare --events 500` runs 500 calls in a
// row's longer run and 100 in its shorter, never more (#25: it ran 1000),
// on each engine with pads on and off; the hour's budget keeps the counts
// from depending on timing. Progress into a pipe is plain lines.
func TestCompareEvents(t *testing.T) {
	for _, backend := range []string{"ptrace", "ptrace-int3", "uprobe"} {
		t.Run(backend, func(t *testing.T) {
			if backend == "uprobe" {
				need.Uprobes(t)
			}
			r := utap(t, "compare", "--events", "500", "--scenario", "entry", "--backends", backend, "--peers", "none",
				"--budget", "1h", "--repeat", "1", "--format", "json")
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			var rep struct {
				Rows []struct {
					Tool     string
					Calls    [2]int
					Seen     int
					Expected int
					Skip     string
				}
			}
			if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
				t.Fatalf("%v: %s", err, r.stdout)
			}
			if len(rep.Rows) != 2 {
				t.Fatalf("rows %+v", rep.Rows)
			}
			for _, row := range rep.Rows {
				if row.Skip != "" || row.Calls != [2]int{100, 500} || row.Seen != 500 || row.Expected != 500 {
					t.Errorf("%s: %+v; want calls 100, 500 and 500/500 events", row.Tool, row)
				}
			}
			if strings.ContainsAny(r.stderr, "\r\033") || !strings.Contains(r.stderr, "utap compare: run ") {
				t.Errorf("progress into a pipe: %q", r.stderr)
			}
		})
	}
}

// TestCompareCountsFlags: -n may not run more than --events asks.
func TestCompareCountsFlags(t *testing.T) {
	oneErrorLine(t, utap(t, "compare", "--events", "500", "-n", "100,600", "-e", "f", "--expect", "N", "--", "true", "{N}"),
		"-n 100,600", "--events 500")
	if r := utap(t, "compare", "--help"); !strings.Contains(r.stdout, "N/5 and N = --events") {
		t.Errorf("compare --help does not say which counts run:\n%s", r.stdout)
	}
}
