//go:build linux && amd64

package compare

import (
	"bytes"
	"encoding/json"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"
)

// noisyReport is issue #25's: utap ptrace's slope fell below the untraced
// one (a negative cost), utap uprobe is slower but clearly measured.
func noisyReport() *Report {
	rows := []Row{
		{Tool: "untraced", Scenario: "entry", Baseline: true, PerEvent: Spread{0.002, 0.002, 0.012}, Startup: 1, Calls: [2]int{40000, 200000}, Seen: 200000, Expected: 200000},
		{Tool: "utap ptrace", Scenario: "entry", PerEvent: Spread{-1.1, -0.915, -0.7}, BaseNoise: 0.01, Calls: [2]int{40000, 200000}, Seen: 200000, Expected: 200000},
		{Tool: "utap uprobe", Scenario: "entry", PerEvent: Spread{2.9, 3, 3.2}, BaseNoise: 0.01, Calls: [2]int{40000, 200000}, Seen: 200000, Expected: 200000},
		{Tool: "ltrace", Scenario: "entry", PerEvent: Spread{-0.2, 0.4, 0.9}, BaseNoise: 0.01, Calls: [2]int{900, 4500}, Seen: 4000, Expected: 4500},
	}
	for i := range rows {
		rows[i].Flag = CheckEvents(rows[i].Seen, rows[i].Expected)
	}
	Rank(rows)
	return &Report{Workload: "C", Repeat: 3, Date: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Rows: rows}
}

func renderNoisy(t *testing.T, f func(io.Writer, *Report) error) string {
	t.Helper()
	var b bytes.Buffer
	if err := f(&b, noisyReport()); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// negative is a negative number as any format would print one.
var negative = regexp.MustCompile(`(^|[^\w.])[-−]\d`)

// A cost within the noise of zero prints as below its bound, never
// negative, and no ratio is computed from it: no 1.0x on the slower row.
func TestNoiseText(t *testing.T) {
	for name, out := range map[string]string{"text": renderNoisy(t, WriteText), "markdown": renderNoisy(t, WriteMarkdown)} {
		if m := negative.FindString(out); m != "" {
			t.Errorf("%s: negative number %q:\n%s", name, m, out)
		}
		if regexp.MustCompile(`\d\.\dx`).MatchString(out) {
			t.Errorf("%s: a ratio in a scenario within noise:\n%s", name, out)
		}
		var ptrace, ltrace string
		for _, l := range strings.Split(out, "\n") {
			switch {
			case strings.Contains(l, "utap ptrace"):
				ptrace = l
			case strings.Contains(l, "ltrace"):
				ltrace = l
			}
		}
		for _, c := range []struct{ line, want string }{
			{ptrace, "<1.10"}, {ptrace, "<0"}, {ptrace, "within the noise of zero (<1.10): no ratios in this scenario"},
			{ptrace, "40000, 200000"},
			// Flagged and within noise: both said, no ratio talk.
			{ltrace, "<0.900"}, {ltrace, "not ranked: dropped 500 of 4500 events; within the noise of zero (<0.900)"},
			{ltrace, "900, 4500"},
		} {
			if !strings.Contains(c.line, c.want) {
				t.Errorf("%s: line %q lacks %q", name, c.line, c.want)
			}
		}
	}
}

// JSON keeps the raw slopes and says they are below the noise.
func TestNoiseJSON(t *testing.T) {
	var back Report
	if err := json.Unmarshal([]byte(renderNoisy(t, WriteJSON)), &back); err != nil {
		t.Fatal(err)
	}
	p, u := back.Rows[1], back.Rows[2]
	if !p.BelowNoise || p.Noise != 1.1 || p.PerEvent.Median != -0.915 || p.Ratio != 0 {
		t.Errorf("ptrace row %+v", p)
	}
	if u.BelowNoise || u.Ratio != 0 {
		t.Errorf("uprobe row %+v: want measured, no ratio", u)
	}
}

// The chart marks whiskers below zero, outlines a cost within noise
// instead of a zero-width bar, and prints no negative value.
func TestNoiseSVG(t *testing.T) {
	out := renderNoisy(t, WriteSVG)
	if m := negative.FindString(textOf(out)); m != "" {
		t.Errorf("negative number %q in the chart's text", m)
	}
	if n := strings.Count(out, "<polygon"); n != 2 { // ptrace and ltrace
		t.Errorf("%d whiskers marked below zero; want 2", n)
	}
	for _, want := range []string{"◀: whisker below zero", `stroke-dasharray="3,2"`, "&lt;1.10 (within noise)"} {
		if !strings.Contains(out, want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
	if strings.Contains(out, "1.0x") {
		t.Error("SVG ranks against a cost within noise")
	}
}

// textOf is the text between an SVG's tags.
func textOf(svg string) string {
	return strings.Join(regexp.MustCompile(`>([^<]*)<`).FindAllString(svg, -1), " ")
}
