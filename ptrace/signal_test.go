//go:build linux && amd64

package ptrace

import (
	"os/exec"
	"testing"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/probe"
)

func TestSignalsPassThrough(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "pt_signals.c")
	want, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	sites := []probe.Site{siteAt(t, bin, "work", 0), siteAt(t, bin, "load", 0, argFetch(1))}
	evs, out, res := run(t, false, sites, bin)
	if out != string(want) || res.ExitCode != 0 {
		t.Fatalf("exit %d, output %q, want %q", res.ExitCode, out, want)
	}
	count := map[string]int{}
	for _, e := range evs {
		count[e.Func]++
	}
	if count["work"] != 100 || count["load"] != 100 {
		t.Fatalf("events %v, want 100 each", count)
	}
}
