//go:build linux && amd64

package compare

import (
	"errors"
	"strings"
	"testing"
)

func TestParseExpect(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Expect
		at10 int
	}{
		{"5000", Expect{0, 5000}, 5000},
		{"N", Expect{1, 0}, 10},
		{"2N", Expect{2, 0}, 20},
		{"2*N+1", Expect{2, 1}, 21},
		{"3 + N", Expect{1, 3}, 13},
		{"2*N-1", Expect{2, -1}, 19},
	} {
		got, err := ParseExpect(c.in)
		if err != nil || got != c.want || got.At(10) != c.at10 {
			t.Errorf("ParseExpect(%q) = %+v, %v; want %+v (at 10: %d)", c.in, got, err, c.want, c.at10)
		}
		if back, _ := ParseExpect(got.String()); back != got {
			t.Errorf("%q: String() = %q does not parse back", c.in, got.String())
		}
	}
	for _, bad := range []string{"", "x", "N*N", "2**N", "-5", "-N"} {
		if _, err := ParseExpect(bad); err == nil {
			t.Errorf("ParseExpect(%q): no error", bad)
		}
	}
}

func TestUserWorkloadTemplate(t *testing.T) {
	w, err := UserWorkload([]string{"sh", "-c", "for i in $(seq {N}); do :; done", "x{N}y"})
	if err != nil {
		t.Fatal(err)
	}
	if w.Single || !w.User || !strings.HasSuffix(w.Exe, "/sh") {
		t.Errorf("workload %+v", w)
	}
	got := strings.Join(w.argv("500", 1, ModeCall), "|")
	if want := w.Exe + "|-c|for i in $(seq 500); do :; done|x500y"; got != want {
		t.Errorf("argv %q; want %q", got, want)
	}
	if _, err := UserScenario([]string{"f"}, Expect{PerN: 1}, w); err != nil {
		t.Errorf("template with --expect N: %v", err)
	}

	one, err := UserWorkload([]string{"true", "7"})
	if err != nil {
		t.Fatal(err)
	}
	if !one.Single || !strings.Contains(one.Name, "start-up") {
		t.Errorf("no {N}: %+v", one)
	}
	if got := strings.Join(one.argv("0", 1, ModeCall), " "); got != one.Exe+" 7" {
		t.Errorf("argv %q", got)
	}
	for _, c := range []struct {
		specs  []string
		expect Expect
		why    string
	}{
		{[]string{"f"}, Expect{PerN: 1}, "counts in N"},
		{[]string{"f"}, Expect{}, "positive event count"},
		{nil, Expect{Const: 1}, "needs probes"},
	} {
		if _, err := UserScenario(c.specs, c.expect, one); err == nil || !strings.Contains(err.Error(), c.why) {
			t.Errorf("UserScenario(%v, %v) = %v; want %q", c.specs, c.expect, err, c.why)
		}
	}
	if _, err := UserWorkload([]string{"no-such-program-here"}); err == nil {
		t.Error("missing program: no error")
	}
}

// TestUserPeerPlans derives the peers' commands from specs on the C
// workload and libc, and says why when a spec does not translate.
func TestUserPeerPlans(t *testing.T) {
	cw := cWorkload(t)
	w, err := UserWorkload([]string{cw.Exe, "{N}", "1", "call"})
	if err != nil {
		t.Fatal(err)
	}
	plan := func(tool Tool, specs ...string) (string, error) {
		t.Helper()
		sc, err := UserScenario(specs, Expect{PerN: 1}, w)
		if err != nil {
			t.Fatal(err)
		}
		p, err := tool.Plan(sc, w)
		if err != nil {
			return "", err
		}
		if p == nil {
			return "", nil
		}
		return p.Shown + shellJoin(p.Argv(w.argv("N", 1, ModeCall), "OUT")), nil
	}
	for _, c := range []struct {
		tool  Tool
		specs []string
		want  []string
	}{
		{ltrace{}, []string{"utap_workload_target(arg1)"}, []string{"ltrace -f -e utap_compare_nothing -x utap_workload_target -o OUT -- " + cw.Exe + " N 1 call"}},
		{ltrace{}, []string{"libc:getppid"}, []string{"-x getppid@libc.so.6 "}},
		{gdb{}, []string{"utap_workload_target(arg1, arg2) if arg2 == 7"}, []string{
			`'dprintf utap_workload_target,"@utapcmp@ %ld %ld\n",$rdi,$rsi'`, `'condition $bpnum $rsi == 7'`, "--args " + cw.Exe + " N 1 call"}},
		{gdb{}, []string{"utap_workload_target if 7 < arg2"}, []string{`'condition $bpnum $rsi > 7'`}},
		{bpftrace{}, []string{"utap_workload_target(arg2) if arg1 != 3"}, []string{
			"uprobe:" + cw.Exe + `:utap_workload_target /pid == cpid && (int64)reg("di") != 3/ { printf("E %ld\n", reg("si")); }`, "-c '" + cw.Exe + " N 1 call'"}},
		{bpftrace{}, []string{"libc:getppid"}, []string{"libc.so.6:getppid /pid == cpid/"}},
		{perf{}, []string{"utap_workload_target(arg1) if arg2 >= 7"}, []string{
			"perf probe -x " + cw.Exe + " -a 'utapcmp:user0=utap_workload_target a0=%di:s64 c=%si:s64'; ",
			"perf stat -x, -o OUT -e utapcmp:user0 --filter 'c >= 7' -- " + cw.Exe + " N 1 call"}},
		{strace{}, []string{"utap_workload_target"}, nil}, // not strace's trade: no row
	} {
		got, err := plan(c.tool, c.specs...)
		if err != nil {
			t.Errorf("%s %v: %v", c.tool.Name(), c.specs, err)
			continue
		}
		for _, want := range c.want {
			if !strings.Contains(got, want) {
				t.Errorf("%s %v:\n%s\nlacks %s", c.tool.Name(), c.specs, got, want)
			}
		}
		if c.want == nil && got != "" {
			t.Errorf("%s takes part: %s", c.tool.Name(), got)
		}
	}
	// Specs the peers cannot express: n/a, and the reason names the spec.
	for _, c := range []struct {
		tool  Tool
		specs []string
		why   string
	}{
		{ltrace{}, []string{"utap_workload_target if arg2 == 7"}, "ltrace has no conditions"},
		{gdb{}, []string{"return:utap_workload_target(ret)"}, "return:utap_workload_target(ret): only function entries"},
		{bpftrace{}, []string{"utap_workload_target+4"}, "utap_workload_target+4: only function entries"},
		{perf{}, []string{"utap_workload_target(*(u32*)(arg1+8))"}, "is not an argument in a register"},
		{gdb{}, []string{"utap_workload_target if arg1 + 1 == 3"}, "not `argN OP constant`"},
		{bpftrace{}, []string{"no_such_function_anywhere"}, "resolving the probes"},
	} {
		_, err := plan(c.tool, c.specs...)
		if !errors.Is(err, ErrNotApplicable) || !strings.Contains(err.Error(), c.why) {
			t.Errorf("%s %v: err = %v; want n/a: %s", c.tool.Name(), c.specs, err, c.why)
		}
	}
}

func TestLtraceCalls(t *testing.T) {
	count := ltraceCalls([]string{"work", "getppid"})
	for line, want := range map[string]int{
		"12 work(1, 7) = 9":                    1,
		"12 getppid@libc.so.6()     = 40":      1,
		"12 work(1, 7 <unfinished ...>":        1,
		"12 <... work resumed> ) = 9":          0,
		"12 workload(3) = 1":                   0,
		"12 +++ exited (status 0) +++":         0,
		"12 libc.so.6->getppid(0x1, 0) = 3000": 0,
	} {
		if got := count(line); got != want {
			t.Errorf("%q counts %d; want %d", line, got, want)
		}
	}
}
