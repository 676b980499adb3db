//go:build linux && amd64

package main

import (
	"strings"
	"testing"

	"github.com/utap/utap/internal/fixture"
)

// TestAggregationRefusals: what cannot go with an aggregation is one line
// saying so, before anything runs.
func TestAggregationRefusals(t *testing.T) {
	bin := fixture.C(t, "cli_work.c")
	for _, tt := range []struct {
		args []string
		msg  string
	}{
		{[]string{"-c", "-e", "work => count()"}, "with an aggregation (=>) write the counts as one"},
		{[]string{"--format", "pprof", "-o", "x.pb", "-e", "work => count()"}, "--format pprof: aggregations (=>) print as text or json"},
		{[]string{"--interval", "1s", "-e", "work"}, "--interval prints aggregations; give a spec one"},
		{[]string{"-e", "work => @x = count()", "-e", "greet => @x = hist(arg1)"}, "map @x is count in one spec and hist in another"},
		{[]string{"-e", "work => lhist(arg1, 0, 10, 3)"}, "want max - min a multiple of step"},
		{[]string{"-e", "work { @a = count(); @b = count(); }"}, "takes one statement"},
	} {
		r := utap(t, append(append([]string{"run", "-q", "--backend", "ptrace"}, tt.args...), "--", bin)...)
		if r.code == 0 || !strings.Contains(r.stderr, tt.msg) || strings.Count(r.stderr, "\n") != 1 || strings.Contains(r.stdout, "sum=") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want one line with %q and the command not run", tt.args, r.code, r.stdout, r.stderr, tt.msg)
		}
	}
}

func TestDefaultMapName(t *testing.T) {
	for in, want := range map[string]string{
		"libc:malloc => count()":             "@libc:malloc",
		"work if arg1 > 5 => avg(arg2) by a": `@"work if arg1 > 5"`,
		`work if str(arg1) == "x" =>count()`: `@"work if str(arg1) == "x""`,
		"return:libc:read(ret) => sum(ret)":  "@return:libc:read(ret)",
	} {
		if got := defaultMapName(in); got != want {
			t.Errorf("defaultMapName(%q) = %s, want %s", in, got, want)
		}
	}
}
