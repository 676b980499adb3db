//go:build linux && amd64

package uprobe

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/utap/utap/elfsym"
	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/probe"
)

// execTarget is et_execer's child running argv after 100 calls of
// work(1, i), traced with -f and the given probes.
func execTarget(t *testing.T, specTexts []string, argv ...string) (probe.Target, []probe.Site, *bytes.Buffer) {
	t.Helper()
	need.Uprobes(t)
	var specs []*probe.Spec
	for _, text := range specTexts {
		s, err := probe.Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		specs = append(specs, s)
	}
	execer := fixture.C(t, "et_execer.c")
	sites, err := elfsym.Resolve(specs, elfsym.Target{Exe: execer})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	return probe.Target{
		Argv: append([]string{execer, "child"}, argv...), Stdout: &out, Follow: true,
		Resolve: func(pid int) ([]probe.Site, error) { return elfsym.Resolve(specs, elfsym.Target{PID: pid}) },
	}, sites, &out
}

// TestFollowExecTally counts in the kernel across an exec: the new
// image's sites get counters of their own; with uprobe_multi and with
// perf links.
func TestFollowExecTally(t *testing.T) {
	for _, noMulti := range []bool{false, true} {
		t.Run(map[bool]string{false: "multi", true: "perf"}[noMulti], func(t *testing.T) {
			tallyAcrossExec(t, &Engine{NoMulti: noMulti})
		})
	}
}

func tallyAcrossExec(t *testing.T, e *Engine) {
	tgt, sites, out := execTarget(t, []string{"work(a, b)", "return:work"}, fixture.C(t, "et_execee.c"), "count", "1000")
	tgt.Tally = true
	c, res := run(t, e, tgt, sites)
	if c.n != 0 {
		t.Errorf("%d events emitted while counting in place", c.n)
	}
	hits := map[probe.Kind]uint64{}
	for _, tl := range res.Tallies {
		hits[tl.Kind] += tl.Hits
	}
	if hits[probe.Entry] != 1100 || hits[probe.Return] != 1100 {
		t.Errorf("counted %d entries and %d returns, want 1100 each (%+v)", hits[probe.Entry], hits[probe.Return], res.Tallies)
	}
	if out.String() != "execee 1000\nchild exit 0\n" || res.ExitCode != 0 || len(res.Notices) != 0 {
		t.Errorf("exit %d, output %q, notices %q", res.ExitCode, out, res.Notices)
	}
}

// TestFollowExecUntraceable: a new image without the probed function is
// not traced, says so once, and the trace goes on to its end.
func TestFollowExecUntraceable(t *testing.T) {
	tr, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true(1) on PATH")
	}
	tgt, sites, out := execTarget(t, []string{"work(a, b)"}, tr)
	c, res := run(t, &Engine{}, tgt, sites)
	if c.n != 100 || res.ExitCode != 0 || out.String() != "child exit 0\n" {
		t.Errorf("%d events, exit %d, output %q; want 100, 0, the child's exit", c.n, res.ExitCode, out)
	}
	if len(res.Notices) != 1 || !strings.Contains(res.Notices[0], "is not traced") {
		t.Errorf("notices %q, want one saying the new image is not traced", res.Notices)
	}
}
