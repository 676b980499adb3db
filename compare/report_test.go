//go:build linux && amd64

package compare

import (
	"strings"
	"testing"
)

func TestCheckEvents(t *testing.T) {
	if f := CheckEvents(1000, 1000); f != "" {
		t.Errorf("exact count flagged: %q", f)
	}
	if f := CheckEvents(0, 0); f != "" {
		t.Errorf("cond-false flagged: %q", f)
	}
	if f := CheckEvents(990, 1000); !strings.Contains(f, "dropped 10 of 1000") {
		t.Errorf("drop flag = %q", f)
	}
	if f := CheckEvents(1002, 1000); !strings.Contains(f, "2 events more") {
		t.Errorf("extra flag = %q", f)
	}
}

// A tracer that drops events is flagged and not ranked, even when it is
// the fastest; baselines and n/a rows are not ranked either.
func TestRankSkipsFlagged(t *testing.T) {
	row := func(tool, sc string, med float64, seen int) Row {
		r := Row{Tool: tool, Scenario: sc, PerEvent: Spread{med, med, med}, Seen: seen, Expected: 100}
		r.Flag = CheckEvents(r.Seen, r.Expected)
		return r
	}
	rows := []Row{
		{Tool: "untraced", Scenario: "entry", PerEvent: Spread{0.01, 0.01, 0.01}, Baseline: true},
		row("fast-but-lossy", "entry", 2, 60),
		row("utap uprobe", "entry", 20, 100),
		row("ltrace", "entry", 300, 100),
		{Tool: "gdb", Scenario: "entry", Skip: "not on PATH"},
		row("noise", "entry", -3, 100),
		row("strace", "syscall", 25, 100),
	}
	Rank(rows)
	want := map[string]float64{"untraced": 0, "fast-but-lossy": 0, "utap uprobe": 1, "ltrace": 15, "gdb": 0, "noise": 0, "strace": 1}
	for _, r := range rows {
		if r.Ratio != want[r.Tool] {
			t.Errorf("%s: ratio %v; want %v", r.Tool, r.Ratio, want[r.Tool])
		}
	}
	if rows[1].Ranked() || rows[1].Flag == "" {
		t.Errorf("lossy row ranked: %+v", rows[1])
	}
}

func TestSelectScenarios(t *testing.T) {
	s, err := SelectScenarios([]string{"entry", "threads"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, x := range s {
		names = append(names, x.Name)
	}
	if got := strings.Join(names, ","); got != "entry,threads-2,threads-4,threads-8" {
		t.Errorf("got %s", got)
	}
	if _, err := SelectScenarios([]string{"nope"}); err == nil || !strings.Contains(err.Error(), "known: entry") {
		t.Errorf("unknown scenario: err = %v", err)
	}
	all, _ := SelectScenarios(nil)
	if len(all) != len(Scenarios()) {
		t.Errorf("default picks %d of %d", len(all), len(Scenarios()))
	}
}
