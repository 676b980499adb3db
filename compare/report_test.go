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
	// "noise" costs less than nothing: entry gets no ratios at all, not a
	// 1.0x on utap uprobe, which is slower than it (#25).
	want := map[string]float64{"untraced": 0, "fast-but-lossy": 0, "utap uprobe": 0, "ltrace": 0, "gdb": 0, "noise": 0, "strace": 1}
	for _, r := range rows {
		if r.Ratio != want[r.Tool] {
			t.Errorf("%s: ratio %v; want %v", r.Tool, r.Ratio, want[r.Tool])
		}
	}
	if rows[1].Ranked() || rows[1].Flag == "" {
		t.Errorf("lossy row ranked: %+v", rows[1])
	}
	rows = append(rows[:5], rows[6:]...) // without the noise, ratios again
	Rank(rows)
	if rows[2].Ratio != 1 || rows[3].Ratio != 15 {
		t.Errorf("ratios %v, %v; want 1, 15", rows[2].Ratio, rows[3].Ratio)
	}
}

// TestJudgeNoise: a row whose lowest repetition is no more than the
// untraced run's spread is within the noise of zero, below the largest of
// its highest repetition, its depth below zero and that spread.
func TestJudgeNoise(t *testing.T) {
	for _, c := range []struct {
		p        Spread
		base     float64
		below    bool
		noise    float64
		skip     string
		baseline bool
		whatItIs string
	}{
		{p: Spread{18.5, 19.25, 21}, base: 0.001, whatItIs: "clear cost"},
		{p: Spread{-1.2, -0.915, -0.9}, below: true, noise: 1.2, whatItIs: "all negative"},
		{p: Spread{-0.3, 0.5, 1.2}, base: 0.1, below: true, noise: 1.2, whatItIs: "straddles zero"},
		{p: Spread{0.01, 0.02, 0.03}, base: 0.05, below: true, noise: 0.05, whatItIs: "inside the untraced spread"},
		{p: Spread{0.06, 0.07, 0.08}, base: 0.05, whatItIs: "just above the untraced spread"},
		{p: Spread{-1, -1, -1}, baseline: true, whatItIs: "baseline: raw, not judged"},
		{skip: "n/a", whatItIs: "not measured"},
	} {
		r := Row{PerEvent: c.p, BaseNoise: c.base, Skip: c.skip, Baseline: c.baseline}
		judgeNoise(&r)
		if r.BelowNoise != c.below || r.Noise != c.noise {
			t.Errorf("%s: below %v noise %v; want %v %v", c.whatItIs, r.BelowNoise, r.Noise, c.below, c.noise)
		}
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
