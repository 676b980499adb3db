package summary

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
)

// WriteText writes the report as strace -c does: aligned columns under a
// header, a dashed line, one row per function, a dashed line and the total.
// Durations are in µs (min, max, p50 and p99 too); time columns are blank
// for functions without durations, errors blank when none.
func (s *Summary) WriteText(w io.Writer) error {
	funcs, total := s.Lines()
	bw := bufio.NewWriter(w)
	what := "function"
	if s.syscalls && !s.functions {
		what = "syscall" // strace -c's heading
	}
	fmt.Fprintf(bw, "%6s %11s %11s %9s %9s %9s %9s %9s %9s %s\n",
		"% time", "seconds", "usecs/call", "calls", "errors", "min(us)", "max(us)", "p50(us)", "p99(us)", what)
	const rule = "------ ----------- ----------- --------- --------- --------- --------- --------- --------- ----------------\n"
	bw.WriteString(rule)
	for _, l := range funcs {
		writeRow(bw, &l)
	}
	bw.WriteString(rule)
	writeRow(bw, &total)
	return bw.Flush()
}

func writeRow(w io.Writer, l *Line) {
	pct, secs, avg, lo, hi, p50, p99 := "", "", "", "", "", "", ""
	if l.Timed > 0 {
		pct = strconv.FormatFloat(l.Percent, 'f', 2, 64)
		secs = strconv.FormatFloat(float64(l.TotalNs)/1e9, 'f', 6, 64)
		avg, lo, hi, p50, p99 = usecs(l.AvgNs), usecs(l.MinNs), usecs(l.MaxNs), usecs(l.P50Ns), usecs(l.P99Ns)
	}
	errs := ""
	if l.Errors > 0 {
		errs = strconv.FormatUint(l.Errors, 10)
	}
	fmt.Fprintf(w, "%6s %11s %11s %9d %9s %9s %9s %9s %9s %s\n",
		pct, secs, avg, l.Calls, errs, lo, hi, p50, p99, l.Function)
}

// usecs shows ns in whole µs as strace does, with one decimal below 10 µs
// where whole µs would hide the difference between short calls.
func usecs(ns uint64) string {
	if ns < 10000 {
		return strconv.FormatFloat(float64(ns)/1e3, 'f', 1, 64)
	}
	return strconv.FormatUint(ns/1000, 10)
}
