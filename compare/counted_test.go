//go:build linux && amd64

package compare

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/utap/utap/internal/need"
)

// TestCountReaders reads real outputs of each tool counting 1234 and 0
// calls (testdata/count: the command lines of TestCountPlans run on a tiny
// C program calling utap_workload_target N times).
func TestCountReaders(t *testing.T) {
	const fn = "utap_workload_target"
	for _, c := range []struct {
		file  string
		count func(out string) (int, error)
	}{
		{"utap.json", func(out string) (int, error) { return utapSummaryCalls(out, fn) }},
		{"bpftrace.txt", func(out string) (int, error) { return countLines(out, bpftraceMapCount("c")) }},
		{"ltrace.txt", func(out string) (int, error) { return countLines(out, ltraceTableCalls(fn)) }},
		{"gdb.txt", func(out string) (int, error) { return countLines(out, gdbHitCount) }},
	} {
		for file, want := range map[string]int{
			c.file:                                 1234,
			strings.Replace(c.file, ".", "-0.", 1): 0,
		} {
			got, err := c.count(filepath.Join("testdata", "count", file))
			if err != nil || got != want {
				t.Errorf("%s: %d, %v; want %d", file, got, err, want)
			}
		}
	}
	if _, err := utapSummaryCalls(filepath.Join("testdata", "count", "ltrace.txt"), fn); err == nil {
		t.Error("utap reader: no error for a file that is not JSON")
	}
}

// TestCountPlans checks each peer's command line for the count scenario.
func TestCountPlans(t *testing.T) {
	w := &Workload{Exe: "/w", Target: "f", Regs: [2]string{"di", "si"}, Libc: true,
		Args: func(calls string, threads int, mode string) []string { return []string{calls, mode} }}
	sc, err := SelectScenarios([]string{"count"})
	if err != nil || len(sc) != 1 || !sc[0].Count || sc[0].Expected(10) != 10 {
		t.Fatalf("count scenario: %+v, %v", sc, err)
	}
	for _, c := range []struct {
		tool Tool
		want string
	}{
		{bpftrace{}, `bpftrace -q -o OUT -e 'uprobe:/w:f /pid == cpid/ { @c = count(); }' -c '/w N call'`},
		{ltrace{}, "ltrace -c -f -L -x f -o OUT -- /w N call"},
		{gdb{}, "-ex 'break f' -ex 'ignore $bpnum 2000000000' -ex run -ex 'info breakpoints' --args /w N call"},
		{perf{}, "perf stat -x, -o OUT -e utapcmp:count -- /w N call"},
	} {
		t.Run(c.tool.Name(), func(t *testing.T) {
			need.Tool(t, c.tool.Name())
			p, err := c.tool.Plan(sc[0], w)
			if err != nil || p == nil {
				t.Fatalf("plan %v, %v", p, err)
			}
			if got := shellJoin(p.Argv(w.argv("N", 1, ModeCall), "OUT")); !strings.Contains(got, c.want) {
				t.Errorf("%s\nwant it to contain\n%s", got, c.want)
			}
		})
	}
	if p, err := (strace{}).Plan(sc[0], w); p != nil || err != nil {
		t.Errorf("strace: %v, %v; want no row", p, err)
	}
}

// TestRunCount runs the count scenario for real with both engines and the
// peers on PATH, at tiny counts: every row counts each call exactly once.
func TestRunCount(t *testing.T) { runForReal(t, "count") }

// TestRunCalls runs the calls scenario (the default trace, a text line
// per call) for real: every row, pads and breakpoints included, sees
// each call's entry and return.
func TestRunCalls(t *testing.T) { runForReal(t, "calls") }

// runForReal runs scenario with utap's engines (the ptrace one with pads
// and without) and the peers on PATH at tiny counts, and wants every row
// to see all its events.
func runForReal(t *testing.T, scenario string) {
	need.Root(t)
	need.Uprobes(t)
	w := cWorkload(t)
	exe, dir := utapBinary(t), t.TempDir()
	sc, _ := SelectScenarios([]string{scenario})
	peers, _ := SelectPeers("auto")
	tools := append([]Tool{Utap{Exe: exe, Backend: "ptrace", Dir: dir}, Utap{Exe: exe, Backend: "ptrace", Dir: dir, NoPads: true},
		Utap{Exe: exe, Backend: "uprobe", Dir: dir}}, peers...)
	rep, err := Run(context.Background(), Config{
		Workload: w, Tools: tools, Scenarios: sc,
		Events: 2000, Repeat: 1, Budget: 100 * time.Millisecond, Dir: dir,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Rows {
		t.Logf("%s: %.2f µs/event, %d of %d seen %s%s", r.Tool, r.PerEvent.Median, r.Seen, r.Expected, r.Flag, r.Skip)
		if r.Skip != "" || r.Flag != "" || r.Expected == 0 {
			t.Errorf("%s: expected %d, %s%s", r.Tool, r.Expected, r.Skip, r.Flag)
		}
	}
}
