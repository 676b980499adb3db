//go:build linux && amd64

package compare

import (
	"fmt"
	"io"
	"strings"
)

// WriteMarkdown writes the report as a Markdown section, what
// docs/benchmarks.md holds: the tables, then the commands that made each row.
func WriteMarkdown(w io.Writer, rep *Report) error {
	if rep.Command != "" {
		fmt.Fprintf(w, "Made by `%s` on %s.\n\n", rep.Command, rep.Date.Format("2006-01-02"))
	}
	if rep.Machine != "" {
		fmt.Fprintf(w, "- Machine: %s\n", rep.Machine)
	}
	fmt.Fprintf(w, "- Workload: %s\n", rep.Workload)
	perCall, attach := split(rep.Rows)
	if len(perCall) > 0 {
		fmt.Fprintf(w, "- Cost of one %s in µs, wall clock, the untraced cost subtracted; %s (min / median / max). Ratio is to the fastest ranked row of the scenario; a cost within the noise of zero shows as <bound, and its scenario gets no ratios.", unitText(rep), repetitions(rep))
		if totalMode(rep) {
			fmt.Fprint(w, " No {N} in the command: one count, so start-up and tear-down are in the cost.")
		}
		fmt.Fprint(w, "\n\n")
		mdRows(w, rep, perCall, "µs/"+strings.Fields(unitText(rep))[0]+" min", countHead(rep), "startup ms")
	}
	if len(attach) > 0 {
		fmt.Fprintf(w, "\n%s; %s.\n\n", attachTitle, repetitions(rep))
		mdRows(w, rep, attach, "ms/1000 probes min", "probes", "fixed ms")
	}
	fmt.Fprintln(w, "\nCommands (BIN: the workload, N: calls, OUT: the event file, PID: the waiting workload):")
	fmt.Fprintln(w)
	for _, r := range rep.Rows {
		if r.Command != "" {
			fmt.Fprintf(w, "- %s, %s: `%s`\n", r.Scenario, r.Tool, strings.ReplaceAll(r.Command, "`", "'"))
		}
	}
	return nil
}

func mdRows(w io.Writer, rep *Report, rows []*Row, minHead, count, fixed string) {
	runs := rep.Runs > 1
	head := fmt.Sprintf("| scenario | tool | %s | median | max | ratio | %s | events seen/expected | %s |", minHead, count, fixed)
	rule := "|---|---|--:|--:|--:|--:|--:|--:|--:|"
	if runs {
		head, rule = head+" runs ± |", rule+"--:|"
	}
	fmt.Fprintln(w, head+" note |")
	fmt.Fprintln(w, rule+"---|")
	for _, r := range rows {
		c := rowCells(r, rep.Runs)
		fmt.Fprintf(w, "| %s | %s | %s | **%s** | %s | %s | %s | %s | %s |", r.Scenario, r.Tool, c.min, c.med, c.max, c.ratio, c.calls, c.events, c.startup)
		if runs {
			fmt.Fprintf(w, " %s |", c.drift)
		}
		fmt.Fprintf(w, " %s |\n", mdEscape(c.note))
	}
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
