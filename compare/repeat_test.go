//go:build linux && amd64

package compare

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"
)

func TestDrift(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{10, 11, 9.5}, 0.1},
		{[]float64{10, 14, 9}, 0.4},
		{[]float64{10}, 0},
		{[]float64{0.2, 0.5, 0.1}, 0}, // below the floor: not judged
	} {
		if got := Drift(c.in); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("Drift(%v) = %v; want %v", c.in, got, c.want)
		}
	}
}

// runReport is one run's report: per tool its three repetitions.
func runReport(vals map[string][3]float64, skip map[string]string) *Report {
	rep := &Report{Workload: "C", Repeat: 3, Runs: 1, Date: time.Unix(0, 0)}
	for _, tool := range []string{"untraced", "utap uprobe", "utap ptrace", "gdb"} {
		r := Row{Tool: tool, Scenario: "entry", Baseline: tool == "untraced", Seen: 100, Expected: 100}
		if s, ok := skip[tool]; ok {
			r.Skip = s
		} else {
			v := vals[tool]
			r.Values = v[:]
			r.PerEvent = Summarize(r.Values)
		}
		rep.Rows = append(rep.Rows, r)
	}
	Rank(rep.Rows)
	return rep
}

// TestMergeFlagsUnsteadyRows merges three runs: a row whose medians agree
// within ±15% passes, one that drifts is flagged in every format, a row
// n/a in one run is n/a, and the baseline is not judged.
func TestMergeFlagsUnsteadyRows(t *testing.T) {
	runs := []*Report{
		runReport(map[string][3]float64{"untraced": {0.01, 0.02, 0.03}, "utap uprobe": {9, 10, 11}, "utap ptrace": {20, 21, 22}, "gdb": {300, 301, 302}}, nil),
		runReport(map[string][3]float64{"untraced": {0.1, 0.2, 0.3}, "utap uprobe": {10, 11, 12}, "utap ptrace": {60, 65, 70}, "gdb": {1, 1, 1}}, map[string]string{"gdb": "gdb crashed"}),
		runReport(map[string][3]float64{"untraced": {0.01, 0.02, 0.03}, "utap uprobe": {9, 9.5, 12}, "utap ptrace": {22, 23, 24}, "gdb": {300, 301, 302}}, nil),
	}
	m, err := Merge(runs)
	if err != nil {
		t.Fatal(err)
	}
	if m.Runs != 3 || len(m.Rows) != 4 {
		t.Fatalf("merged: runs %d, %d rows", m.Runs, len(m.Rows))
	}
	byTool := map[string]*Row{}
	for i := range m.Rows {
		byTool[m.Rows[i].Tool] = &m.Rows[i]
	}
	up, pt, gdb, base := byTool["utap uprobe"], byTool["utap ptrace"], byTool["gdb"], byTool["untraced"]
	if up.Unsteady() || len(up.Values) != 9 || len(up.Medians) != 3 || up.PerEvent.Median != 10 || up.Ratio != 1 {
		t.Errorf("steady row: %+v", up)
	}
	if !pt.Unsteady() || math.Abs(pt.Drift-(65-23)/23.0) > 1e-9 {
		t.Errorf("drifting row: drift %v, %+v", pt.Drift, pt)
	}
	if gdb.Skip != "run 2: gdb crashed" || gdb.Ratio != 0 {
		t.Errorf("n/a row: %+v", gdb)
	}
	if base.Drift != 0 || base.Unsteady() {
		t.Errorf("baseline judged: %+v", base)
	}

	var text, md bytes.Buffer
	WriteText(&text, m)
	WriteMarkdown(&md, m)
	for name, out := range map[string]string{"text": text.String(), "markdown": md.String()} {
		for _, want := range []string{"3 runs of 3 repetitions", "±10%", "±183%", "unsteady: medians of 3 runs spread beyond ±15%"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s lacks %q:\n%s", name, want, out)
			}
		}
	}
	var svg bytes.Buffer
	WriteSVG(&svg, m)
	if !strings.Contains(svg.String(), "unsteady ±183%") {
		t.Error("SVG does not mark the unsteady row")
	}

	if _, err := Merge([]*Report{runs[0], {Workload: "Go"}}); err == nil {
		t.Error("merging different workloads: no error")
	}
}
