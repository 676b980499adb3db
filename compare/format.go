//go:build linux && amd64

package compare

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// Write writes the report in format: text, json or markdown.
func Write(w io.Writer, rep *Report, format string) error {
	switch format {
	case "text", "":
		return WriteText(w, rep)
	case "json":
		return WriteJSON(w, rep)
	case "markdown", "md":
		return WriteMarkdown(w, rep)
	}
	return fmt.Errorf("unknown --format %q (use text, json or markdown)", format)
}

// us shows a cost in µs with about three significant digits.
func us(x float64) string {
	switch a := math.Abs(x); {
	case a < 1:
		return fmt.Sprintf("%.3f", x)
	case a < 10:
		return fmt.Sprintf("%.2f", x)
	case a < 100:
		return fmt.Sprintf("%.1f", x)
	}
	return fmt.Sprintf("%.0f", x)
}

// cost shows one repetition's cost, never negative: a repetition that
// measured less than the untraced run shows as "<0".
func cost(x float64) string {
	if x < 0 {
		return "<0"
	}
	return us(x)
}

// noiseText is a cost within the noise of zero: below its bound.
func noiseText(r *Row) string {
	if r.Noise > 0 {
		return "<" + us(r.Noise)
	}
	return "≈0"
}

// cells are a row's measured columns as text, shared by text and markdown.
type cells struct {
	min, med, max, ratio, calls, events, startup, drift, note string
}

func rowCells(r *Row, runs int) cells {
	if r.Skip != "" {
		return cells{min: "n/a", med: "n/a", max: "n/a", ratio: "-", calls: "-", events: "-", startup: "-", drift: "-", note: "n/a: " + r.Skip}
	}
	c := cells{
		min: cost(r.PerEvent.Min), med: cost(r.PerEvent.Median), max: cost(r.PerEvent.Max),
		ratio:   "-",
		calls:   "-",
		events:  fmt.Sprintf("%d/%d", r.Seen, r.Expected),
		startup: fmt.Sprintf("%.1f", r.Startup),
		drift:   "-",
	}
	if r.Calls[1] > 0 {
		c.calls = fmt.Sprintf("%d, %d", r.Calls[0], r.Calls[1])
	}
	if r.BelowNoise {
		c.med = noiseText(r)
	}
	if r.Mode == ModeTotal {
		c.startup = "-"
	}
	var notes []string
	switch {
	case r.Baseline && r.Mode == ModeTotal:
		notes = append(notes, "untraced: its time is subtracted from the rows below")
	case r.Baseline:
		notes = append(notes, "untraced: subtracted from the rows below")
	case r.Flag != "":
		notes = append(notes, "not ranked: "+r.Flag)
	case r.Ratio > 0:
		c.ratio = fmt.Sprintf("%.1fx", r.Ratio)
	}
	if r.BelowNoise {
		n := "within the noise of zero (" + noiseText(r) + ")"
		if r.Ranked() {
			n += ": no ratios in this scenario"
		}
		notes = append(notes, n)
	}
	if runs > 1 && !r.Baseline && r.Drift > 0 {
		c.drift = fmt.Sprintf("±%.0f%%", 100*r.Drift)
		if r.Unsteady() {
			notes = append(notes, fmt.Sprintf("unsteady: medians of %d runs spread beyond ±%.0f%%", len(r.Medians), 100*MaxDrift))
		}
	}
	if r.Note != "" {
		notes = append(notes, r.Note)
	}
	c.note = strings.Join(notes, "; ")
	return c
}

// split parts the rows into the per-call table and the attach table.
func split(rows []Row) (perCall, attach []*Row) {
	for i := range rows {
		if rows[i].Mode == ModeAttach {
			attach = append(attach, &rows[i])
		} else {
			perCall = append(perCall, &rows[i])
		}
	}
	return perCall, attach
}

// unitText says what a per-call row's cost is per.
func unitText(rep *Report) string {
	if rep.Unit == "event" {
		return "event of your probes"
	}
	return "call of the probed function"
}

// totalMode reports whether the rows ran the user's command at one count.
func totalMode(rep *Report) bool {
	for _, r := range rep.Rows {
		if r.Mode == ModeTotal {
			return true
		}
	}
	return false
}

// attachTitle heads the attach table in every format.
const attachTitle = "Attach and detach of 1,000 probes in a waiting process: ms per 1,000 probes (slope between runs with 1 and 1,000 probes); fixed ms: a run with no probes, start-up included"
