package enginetest

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/utap/utap/internal/fixture"
)

// aggPadSpecs are agg_work's aggregations, one probe per function (so
// each gets an in-process pad) but w_two's two, which keep their
// breakpoint: every kind, keys by expression, pid and comm, and w_keys's
// 5000 keys, more than a pad's table holds (4096 slots).
var aggPadSpecs = []string{
	"w_count => count()",
	"w_sum => sum(arg2) by arg1",
	"w_min => min(arg2 - 50000) by arg1",
	"w_max => max(arg2) by arg1, comm",
	"w_avg => avg(arg2) by pid",
	"w_hist => hist(arg2 - 1000) by arg1",
	"w_lhist => lhist(arg2 % 1000, 100, 900, 100)",
	"w_keys => count() by arg2 % 5000",
	"w_two if arg1 < 3 => count() by arg1",
	"w_two if arg1 >= 3 => sum(arg2)",
}

var aggPidRE = regexp.MustCompile(`@w_avg\[\d+\]`)

// TestCLIAggregatePads: the pads aggregate in the process's memory and
// print what the breakpoints print, to the count; keys beyond the table
// fall back to records, and the totals stay exact.
func TestCLIAggregatePads(t *testing.T) {
	b := backends[0]
	b.need(t)
	bin := fixture.C(t, "agg_work.c", "-O1")
	run := func(n int, extra ...string) (string, string) {
		out, stderr := aggRun(t, append([]string{"-q", "--backend", b.name}, extra...), aggPadSpecs, bin, strconv.Itoa(n))
		return aggPidRE.ReplaceAllString(out, "@w_avg[PID]"), stderr
	}
	t.Run("same as breakpoints", func(t *testing.T) {
		// 20k calls: the breakpoints take a few seconds.
		pads, _ := run(20000)
		bps, _ := run(20000, "--no-pads")
		if pads != bps {
			t.Errorf("pads:\n%s\nbreakpoints:\n%s", pads, bps)
		}
		if !strings.Contains(pads, "@w_count: 20000\n") || !strings.Contains(pads, "@w_keys[4999]: 4\n") {
			t.Errorf("pads:\n%s\nwant @w_count: 20000 and @w_keys[4999]: 4", pads)
		}
	})
	t.Run("in memory", func(t *testing.T) {
		const n = 100000
		out, stderr := run(n, "-v")
		// 8 functions with pads, n calls each, in the tables but for
		// w_keys's keys that found no slot: at least 904, 20 calls each.
		m := regexp.MustCompile(`aggregations: (\d+) calls aggregated in the pads' memory, (\d+) written as records`).FindStringSubmatch(stderr)
		if m == nil {
			t.Fatalf("stderr %q: no aggregations line", stderr)
		}
		hits, _ := strconv.Atoi(m[1])
		fell, _ := strconv.Atoi(m[2])
		if hits+fell != 8*n || fell < 904*20 {
			t.Errorf("%d calls in memory, %d as records; want %d in all, at least %d as records", hits, fell, 8*n, 904*20)
		}
		for i := range 7 {
			// i, i+7, ... below n.
			cnt := (n - i + 6) / 7
			sum := int64(cnt)*int64(i) + 7*int64(cnt)*int64(cnt-1)/2
			for _, line := range []string{
				fmt.Sprintf("@w_sum[%d]: %d\n", i, sum),
				fmt.Sprintf("@w_min[%d]: %d\n", i, i-50000),
			} {
				if !strings.Contains(out, line) {
					t.Errorf("no line %q in\n%s", line, out)
				}
			}
		}
		for _, want := range []string{"@w_count: 100000\n", "@w_avg[PID]: 49999\n"} {
			if !strings.Contains(out, want) {
				t.Errorf("no line %q", want)
			}
		}
		// The comm is the fixture's file name, 15 bytes of it.
		if !regexp.MustCompile(`(?m)^@w_max\[4, agg_work[^\]]*\]: 99999$`).MatchString(out) {
			t.Errorf("no line @w_max[4, agg_work...]: 99999 in\n%s", out)
		}
		keys := regexp.MustCompile(`(?m)^@w_keys\[\d+\]: 20$`).FindAllString(out, -1)
		if len(keys) != 5000 {
			t.Errorf("%d keys of w_keys with 20 calls, want 5000", len(keys))
		}
	})
}
