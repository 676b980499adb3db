//go:build linux && amd64

package compare

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/utap/utap/internal/need"
)

func cWorkload(t *testing.T) *Workload {
	t.Helper()
	need.Tool(t, "gcc")
	w, err := BuildC("gcc", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestRunPeers measures the real peers on the entry scenario with tiny
// counts: every row is measured (or n/a with a reason) and counts its events.
func TestRunPeers(t *testing.T) {
	need.Root(t)
	w := cWorkload(t)
	sc, err := SelectScenarios([]string{"entry", "cond-true", "syscall"})
	if err != nil {
		t.Fatal(err)
	}
	peers, _ := SelectPeers("auto")
	var prog bytes.Buffer
	rep, err := Run(context.Background(), Config{
		Workload: w, Tools: peers, Scenarios: sc,
		Events: 2000, Repeat: 1, Budget: 100 * time.Millisecond,
		Dir: t.TempDir(), Progress: &prog,
	})
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	WriteText(&text, rep)
	t.Logf("\n%s", text.String())
	for _, r := range rep.Rows {
		if r.Skip != "" {
			if r.Tool == "ltrace" && r.Scenario == "cond-true" {
				continue
			}
			t.Errorf("%s %s: n/a: %s", r.Scenario, r.Tool, r.Skip)
			continue
		}
		if r.Flag != "" {
			t.Errorf("%s %s: %s", r.Scenario, r.Tool, r.Flag)
		}
		if r.Expected == 0 && r.Scenario != "cond-false" {
			t.Errorf("%s %s: expected 0 events", r.Scenario, r.Tool)
		}
	}
	if !strings.Contains(prog.String(), "utap compare: run") {
		t.Errorf("no progress line: %q", prog.String())
	}
}
