//go:build linux && amd64

package ptrace

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/probe"
)

// TestRelocateEveryInstruction probes every instruction of every function
// of ssol_reloc.S: the output must match an untraced run, and every
// function must report its entry.
func TestRelocateEveryInstruction(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "ssol_reloc.S")
	want, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(fixture.Source(t, "ssol_reloc.S"))
	if err != nil {
		t.Fatal(err)
	}
	var sites []probe.Site
	var funcs []string
	for _, m := range regexp.MustCompile(`(?m)^FUNC (\w+)`).FindAllStringSubmatch(string(src), -1) {
		funcs = append(funcs, m[1])
		for _, off := range funcInsns(t, bin, m[1]) {
			s := siteAt(t, bin, m[1], off)
			s.Probe = len(sites)
			sites = append(sites, s)
		}
	}
	evs, out, res := run(t, false, sites, bin)
	if out != string(want) || res.ExitCode != 0 {
		t.Fatalf("exit %d, output:\n%s\nwant:\n%s", res.ExitCode, out, want)
	}
	entry := map[string]int{}
	for _, e := range evs {
		if sites[e.ProbeIndex].Addr == sites[e.ProbeIndex].FuncAddr {
			entry[e.Func]++
		}
	}
	// The fixture calls its AVX functions only where the CPU runs them.
	unrun := map[string]bool{
		"rip_avx":  strings.Contains(string(want), "avx2=0"),
		"rip_evex": strings.Contains(string(want), "avx512=0"),
	}
	for _, f := range funcs {
		if entry[f] == 0 && !unrun[f] {
			t.Errorf("%s: no entry event", f)
		}
	}
	t.Logf("%d functions, %d probes, %d events", len(funcs), len(sites), len(evs))
}
