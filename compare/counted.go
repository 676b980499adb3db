//go:build linux && amd64

package compare

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/utap/utap/internal/summary"
)

// The count scenario's readers: each tool reports one total at exit, in its
// own format, and a run that never reached the target prints no row for it,
// which reads as 0 calls.

// utapSummaryCalls reads fn's calls from the JSON summary of `utap run -C
// --format json`.
func utapSummaryCalls(out, fn string) (int, error) {
	b, err := os.ReadFile(out)
	if err != nil {
		return 0, err
	}
	var rep summary.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return 0, fmt.Errorf("utap summary %s: %w", out, err)
	}
	for _, l := range rep.Functions {
		if l.Function == fn {
			return int(l.Calls), nil
		}
	}
	return 0, nil
}

// bpftraceMapCount reads "@name: N", the line bpftrace prints at exit for
// a count() map with no keys.
func bpftraceMapCount(name string) func(string) int {
	return func(l string) int {
		v, ok := strings.CutPrefix(l, "@"+name+": ")
		if !ok {
			return 0
		}
		n, _ := strconv.Atoi(strings.TrimSpace(v))
		return n
	}
}

// ltraceTableCalls reads fn's row of the `ltrace -c` table,
// "% time  seconds  usecs/call  calls  function": calls is the column
// before the name. ltrace may show the name with its library, fn@lib.
func ltraceTableCalls(fn string) func(string) int {
	return func(l string) int {
		f := strings.Fields(l)
		if len(f) < 5 {
			return 0
		}
		if name := f[len(f)-1]; name != fn && !strings.HasPrefix(name, fn+"@") {
			return 0
		}
		n, _ := strconv.Atoi(f[len(f)-2])
		return n
	}
}

// gdbHits matches what `info breakpoints` says of a breakpoint that has been
// reached: "breakpoint already hit 1 time", "... 1234 times".
var gdbHits = regexp.MustCompile(`^\s*breakpoint already hit (\d+) times?$`)

// gdbHitCount reads the hit count of `info breakpoints` (one breakpoint).
func gdbHitCount(l string) int {
	m := gdbHits.FindStringSubmatch(l)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}
