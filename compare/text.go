//go:build linux && amd64

package compare

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// WriteText writes the report as an aligned table, one scenario after the
// other, like the uprobes paper's table; the attach table and the
// commands follow.
func WriteText(w io.Writer, rep *Report) error {
	fmt.Fprintf(w, "workload: %s\n", rep.Workload)
	if rep.Machine != "" {
		fmt.Fprintf(w, "machine:  %s\n", rep.Machine)
	}
	perCall, attach := split(rep.Rows)
	if len(perCall) > 0 {
		fmt.Fprintf(w, "µs per %s (wall clock, untraced cost subtracted), %s\n", unitText(rep), repetitions(rep))
		if totalMode(rep) {
			fmt.Fprintln(w, "(no {N} in the command: one count, so start-up and tear-down are in the cost)")
		}
		fmt.Fprintf(w, "%s: the counts of the row's two runs, whose slope is the cost\n", countHead(rep))
		fmt.Fprintln(w)
		writeRows(w, rep, perCall, countHead(rep), "startup ms")
	}
	if len(attach) > 0 {
		if len(perCall) > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s, %s\n\n", attachTitle, repetitions(rep))
		writeRows(w, rep, attach, "probes", "fixed ms")
	}

	fmt.Fprint(w, "\ncommands (BIN: the workload, N: calls, OUT: the event file, PID: the waiting workload):\n")
	for _, r := range rep.Rows {
		if r.Command != "" {
			fmt.Fprintf(w, "  %-11s %-12s %s\n", r.Scenario, r.Tool, r.Command)
		}
	}
	if rep.Command != "" {
		fmt.Fprintf(w, "\nmade by: %s\n", rep.Command)
	}
	return nil
}

// writeRows writes a table; count heads the column of the two counts of
// the slope (calls or probes), fixed the column of the intercept.
func writeRows(w io.Writer, rep *Report, rows []*Row, count, fixed string) {
	head := []string{"scenario", "tool", "min", "median", "max", "ratio", count, "events", fixed}
	align := "llrrrrrrr"
	if rep.Runs > 1 {
		head, align = append(head, "runs"), align+"r"
	}
	table := [][]string{append(head, "")}
	last := ""
	for _, r := range rows {
		sc := r.Scenario
		if sc == last {
			sc = ""
		}
		last = r.Scenario
		c := rowCells(r, rep.Runs)
		line := []string{sc, r.Tool, c.min, c.med, c.max, c.ratio, c.calls, c.events, c.startup}
		if rep.Runs > 1 {
			line = append(line, c.drift)
		}
		table = append(table, append(line, c.note))
	}
	// Names to the left, numbers to the right, the free-text note last.
	writeTable(w, table, align+"l")
}

// countHead heads the column of the two counts of a per-call row: calls
// of the built-in workload, or the user's {N}.
func countHead(rep *Report) string {
	if rep.Unit == "event" {
		return "N"
	}
	return "calls"
}

// repetitions says how many measurements each row sums up.
func repetitions(rep *Report) string {
	if rep.Runs > 1 {
		return fmt.Sprintf("%d runs of %d repetitions (runs: how far one run's median lies from the median of the runs)", rep.Runs, rep.Repeat)
	}
	return fmt.Sprintf("%d repetitions", rep.Repeat)
}

// writeTable aligns cells in columns, each l(eft) or r(ight) per align.
func writeTable(w io.Writer, table [][]string, align string) {
	width := make([]int, len(align))
	for _, row := range table {
		for i, c := range row {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	for _, row := range table {
		var b strings.Builder
		for i, c := range row {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i > 0 {
				b.WriteString("  ")
			}
			if align[i] == 'r' {
				b.WriteString(pad + c)
			} else if i < len(row)-1 {
				b.WriteString(c + pad)
			} else {
				b.WriteString(c)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}
