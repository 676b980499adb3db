//go:build linux && amd64

package compare

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// recorder runs the workload untraced and keeps the call count of every
// run it wraps; it reports as many events as calls, so its row is exact.
type recorder struct{ calls *[]int }

func (recorder) Name() string { return "recorder" }
func (r recorder) Plan(Scenario, *Workload) (*Plan, error) {
	last := 0
	return &Plan{
		Argv: func(wl []string, _ string) []string {
			n, err := strconv.Atoi(wl[1])
			if err != nil {
				return wl // the report's command line, with N
			}
			*r.calls = append(*r.calls, n)
			last = n
			return wl
		},
		Count: func(string, string) (int, error) { return last, nil },
	}, nil
}

// TestRunEventsRuns: --events 500 makes the longer run 500 calls and no
// run more, calibration included (#25: it ran 1000), and the row says so.
// The budget is an hour, so the counts cannot depend on timing. Progress
// into a file (no terminal) is plain lines without \r or escapes.
func TestRunEventsRuns(t *testing.T) {
	w := cWorkload(t)
	sc, _ := SelectScenarios([]string{"entry"})
	var calls []int
	prog, err := os.Create(filepath.Join(t.TempDir(), "progress"))
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	rep, err := Run(context.Background(), Config{
		Workload: w, Tools: []Tool{recorder{&calls}}, Scenarios: sc,
		Events: 500, Repeat: 2, Budget: time.Hour, Dir: t.TempDir(), Progress: prog,
	})
	if err != nil {
		t.Fatal(err)
	}
	most := 0
	for _, n := range calls {
		most = max(most, n)
	}
	if most != 500 || len(calls) != 2+2*2 {
		t.Errorf("runs made %v calls; want at most and at last 500, 6 runs", calls)
	}
	for _, r := range rep.Rows {
		if r.Skip != "" || r.Calls != [2]int{100, 500} || r.Expected != 500 || r.Seen != 500 {
			t.Errorf("%s: calls %v, events %d/%d %s; want 100, 500 and 500/500", r.Tool, r.Calls, r.Seen, r.Expected, r.Skip)
		}
	}
	b, err := os.ReadFile(prog.Name())
	if err != nil {
		t.Fatal(err)
	}
	out := string(b)
	if strings.ContainsAny(out, "\r\033") || !strings.Contains(out, "utap compare: run ") || !strings.HasSuffix(out, "\n") {
		t.Errorf("progress to a file:\n%q", out)
	}
	if n := strings.Count(out, "\n"); n != 1+1+2*2 { // calibrating each row, then each row per repetition
		t.Errorf("%d progress lines; want 6:\n%s", n, out)
	}
}

// TestRunCalibrationGrows: calibration runs more calls until they cost a
// tenth of the budget or --events: with a budget of an hour, 1,000, then
// 10,000, then 20,000 (--events), never more; the rows then run 4,000 and
// 20,000.
func TestRunCalibrationGrows(t *testing.T) {
	w := cWorkload(t)
	sc, _ := SelectScenarios([]string{"entry"})
	var calls []int
	rep, err := Run(context.Background(), Config{
		Workload: w, Tools: []Tool{recorder{&calls}}, Scenarios: sc,
		Events: 20000, Repeat: 1, Budget: time.Hour, Dir: t.TempDir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{0, 1000, 10000, 20000, 4000, 20000}; !slices.Equal(calls, want) {
		t.Errorf("runs made %v calls; want %v", calls, want)
	}
	for _, r := range rep.Rows {
		if r.Skip != "" || r.Calls != [2]int{4000, 20000} {
			t.Errorf("%s: calls %v %s; want 4000, 20000", r.Tool, r.Calls, r.Skip)
		}
	}
}

// TestProgressTerminal: only a terminal gets the line redrawn in place.
func TestProgressTerminal(t *testing.T) {
	ptm, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer ptm.Close()
	if err := unix.IoctlSetPointerInt(int(ptm.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(ptm.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	pts, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer pts.Close()
	file, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	for _, c := range []struct {
		w    io.Writer
		want bool
	}{{pts, true}, {file, false}, {&bytes.Buffer{}, false}, {nil, false}} {
		if got := isTerminal(c.w); got != c.want {
			t.Errorf("isTerminal(%T) = %v; want %v", c.w, got, c.want)
		}
	}
}
