package compare

import (
	"fmt"
	"io"
	"strings"
)

// WriteMarkdown writes the report as a Markdown section, what
// docs/benchmarks.md holds: the table, then the commands that made each row.
func WriteMarkdown(w io.Writer, rep *Report) error {
	if rep.Command != "" {
		fmt.Fprintf(w, "Made by `%s` on %s.\n\n", rep.Command, rep.Date.Format("2006-01-02"))
	}
	if rep.Machine != "" {
		fmt.Fprintf(w, "- Machine: %s\n", rep.Machine)
	}
	fmt.Fprintf(w, "- Workload: %s\n", rep.Workload)
	fmt.Fprintf(w, "- Cost of one call of the probed function in µs, wall clock, the untraced cost subtracted; %d repetitions (min / median / max). Ratio is to the fastest ranked row of the scenario.\n\n", rep.Repeat)
	fmt.Fprintln(w, "| scenario | tool | µs/call min | median | max | ratio | events seen/expected | startup ms | note |")
	fmt.Fprintln(w, "|---|---|--:|--:|--:|--:|--:|--:|---|")
	for i := range rep.Rows {
		r := &rep.Rows[i]
		c := rowCells(r)
		fmt.Fprintf(w, "| %s | %s | %s | **%s** | %s | %s | %s | %s | %s |\n", r.Scenario, r.Tool, c.min, c.med, c.max, c.ratio, c.events, c.startup, mdEscape(c.note))
	}
	fmt.Fprintln(w, "\nCommands (BIN: the workload, N: calls, OUT: the event file):")
	fmt.Fprintln(w)
	for _, r := range rep.Rows {
		if r.Command != "" {
			fmt.Fprintf(w, "- %s, %s: `%s`\n", r.Scenario, r.Tool, strings.ReplaceAll(r.Command, "`", "'"))
		}
	}
	return nil
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
