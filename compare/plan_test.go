//go:build linux && amd64

package compare

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestUtapPlan(t *testing.T) {
	w := &Workload{Exe: "/w", Target: "f", Idle: []string{"i0", "i1", "i2"}, Libc: true,
		Args: func(calls string, threads int, mode string) []string { return []string{calls, mode} }}
	u := Utap{Exe: "/utap", Backend: "ptrace", Dir: t.TempDir()}
	byName := map[string]Scenario{}
	for _, s := range Scenarios() {
		byName[s.Name] = s
	}
	for name, want := range map[string]string{
		"entry":      "-e f -o OUT -- /w N call",
		"count":      "--count-only --format json -e f -o OUT -- /w N call",
		"fetch":      "-e 'f(arg1, arg2)' -o",
		"return":     "-e f -e 'return:f(ret)' -o",
		"cond-false": "-e 'f(arg1) if arg2 != 7' -o",
		"cond-true":  "-e 'f(arg1, arg2) if arg2 == 7' -o",
		"syscall":    "-e syscall:getppid -o OUT -- /w N syscall",
	} {
		p, err := u.Plan(byName[name], w)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := shellJoin(p.Argv(w.argv("N", 1, byName[name].Mode), "OUT"))
		if !strings.HasPrefix(got, "/utap run --backend ptrace -q ") || !strings.Contains(got, " --format json ") || !strings.Contains(got, want) {
			t.Errorf("%s: %s; want it to contain %s", name, got, want)
		}
	}
	// The default trace: text, no --entry-only, a line per call.
	p, err := u.Plan(byName["calls"], w)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := shellJoin(p.Argv(w.argv("N", 1, ModeCall), "OUT")), "/utap run --backend ptrace -q -e 'f(arg1, arg2)' -o OUT -- /w N call"; got != want {
		t.Errorf("calls: %s; want %s", got, want)
	}
	if n := callLines("f", true)("[pid 7] f(1, 2) = 3"); n != 2 {
		t.Errorf("a call's line counts %d events, want 2", n)
	}
	// 4 probes: the target and the 3 idle functions, from a file.
	s := byName["entry"]
	s.Probes = 4
	p, err = u.Plan(s, w)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(p.Argv([]string{"/w"}, "OUT"), " ")
	file := filepath.Join(u.Dir, "probes-4.txt")
	if !strings.Contains(got, "--probes "+file) {
		t.Errorf("argv %s lacks the probes file", got)
	}
	if b, _ := os.ReadFile(file); string(b) != "f\ni0\ni1\ni2\n" {
		t.Errorf("probes file = %q", b)
	}
	s.Probes = 5
	if _, err := u.Plan(s, w); err == nil {
		t.Error("5 probes out of 4 functions: no error")
	}
}

func TestRetOffsets(t *testing.T) {
	w := cWorkload(t)
	rets, err := retOffsets(w.Exe, w.Target)
	if err != nil {
		t.Fatal(err)
	}
	// lea (%rsi,%rdi,2),%rax; ret — give or take the compiler's prologue.
	if len(rets) != 1 || rets[0] == 0 || rets[0] > 16 {
		t.Errorf("RET offsets %v", rets)
	}
	if _, err := retOffsets(w.Exe, "no_such_function"); err == nil {
		t.Error("no error for a missing function")
	}
}

// lossy runs the workload untraced and reports one event per run whatever
// the calls: Run must flag the row and leave it out of the ranking,
// however fast it is.
type lossy struct{}

func (lossy) Name() string { return "lossy" }
func (lossy) Plan(Scenario, *Workload) (*Plan, error) {
	return &Plan{
		Argv:  func(wl []string, _ string) []string { return wl },
		Count: func(string, string) (int, error) { return 1, nil },
	}, nil
}

func TestRunFlagsDroppedEvents(t *testing.T) {
	w := cWorkload(t)
	sc, _ := SelectScenarios([]string{"entry"})
	rep, err := Run(context.Background(), Config{
		Workload: w, Tools: []Tool{lossy{}}, Scenarios: sc,
		Events: 1000, Repeat: 2, Budget: 10 * time.Millisecond, Dir: t.TempDir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 2 {
		t.Fatalf("rows %+v", rep.Rows)
	}
	r := rep.Rows[1]
	if r.Tool != "lossy" || r.Skip != "" || r.Ranked() || r.Ratio != 0 || !strings.HasPrefix(r.Flag, "dropped") {
		t.Errorf("lossy row: %+v", r)
	}
	if b := rep.Rows[0]; !b.Baseline || b.Seen != b.Expected || b.Expected == 0 {
		t.Errorf("baseline row: %+v", b)
	}
}

func TestCheckOutput(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		out  string
		want int64
		ok   bool
	}{
		{"1006000\n", 1006000, true},
		{"Dprintf 1 at 0x1080\n[0\nThread 0x7ffff7dd16c0 (LWP 6070) exited]\n", 0, true}, // gdb interleaved
		{"E 10 7\nE 11 7\n", 1006000, false},
		{"10060001\n", 1006000, false},
		{"", 0, false},
	} {
		f := filepath.Join(dir, "stdout")
		os.WriteFile(f, []byte(c.out), 0o644)
		if err := checkOutput(f, c.want); (err == nil) != c.ok {
			t.Errorf("checkOutput(%q, %d) = %v", c.out, c.want, err)
		}
	}
}
