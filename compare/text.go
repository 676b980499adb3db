package compare

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// WriteText writes the report as an aligned table, one scenario after the
// other, like the uprobes paper's table; commands follow the table.
func WriteText(w io.Writer, rep *Report) error {
	fmt.Fprintf(w, "workload: %s\n", rep.Workload)
	if rep.Machine != "" {
		fmt.Fprintf(w, "machine:  %s\n", rep.Machine)
	}
	fmt.Fprintf(w, "µs per call of the probed function (wall clock, untraced cost subtracted), %d repetitions\n\n", rep.Repeat)
	table := [][]string{{"scenario", "tool", "min", "median", "max", "ratio", "events", "startup ms", ""}}
	last := ""
	for i := range rep.Rows {
		r := &rep.Rows[i]
		sc := r.Scenario
		if sc == last {
			sc = ""
		}
		last = r.Scenario
		c := rowCells(r)
		table = append(table, []string{sc, r.Tool, c.min, c.med, c.max, c.ratio, c.events, c.startup, c.note})
	}
	// Names to the left, numbers to the right, the free-text note last.
	writeTable(w, table, "llrrrrrrl")

	fmt.Fprint(w, "\ncommands (BIN: the workload, N: calls, OUT: the event file):\n")
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
