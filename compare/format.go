package compare

import (
	"fmt"
	"io"
	"math"
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

// cells are a row's measured columns as text, shared by text and markdown.
type cells struct {
	min, med, max, ratio, events, startup, note string
}

func rowCells(r *Row) cells {
	if r.Skip != "" {
		return cells{min: "n/a", med: "n/a", max: "n/a", ratio: "-", events: "-", startup: "-", note: "n/a: " + r.Skip}
	}
	c := cells{
		min: us(r.PerEvent.Min), med: us(r.PerEvent.Median), max: us(r.PerEvent.Max),
		ratio:   "-",
		events:  fmt.Sprintf("%d/%d", r.Seen, r.Expected),
		startup: fmt.Sprintf("%.1f", r.Startup),
	}
	switch {
	case r.Baseline:
		c.note = "untraced: subtracted from the rows below"
	case r.Flag != "":
		c.note = "not ranked: " + r.Flag
	case r.Ratio > 0:
		c.ratio = fmt.Sprintf("%.1fx", r.Ratio)
	case r.PerEvent.Median <= 0:
		c.note = "below the measurement noise"
	}
	return c
}
