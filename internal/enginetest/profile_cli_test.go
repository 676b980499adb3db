package enginetest

import (
	"bytes"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// TestCLIProfile: --format pprof counts each call of leaf once under its
// stack, timed by its return twin, in a file go tool pprof reads; and
// --format flamegraph draws the same calls as an SVG. On both engines,
// whose stacks may differ in depth (the kernel's frame-pointer walk):
// totals are compared, not frames below the probed function's callers.
func TestCLIProfile(t *testing.T) {
	for _, b := range backends {
		variants := [][]string{nil}
		if b.name == "ptrace" {
			variants = append(variants, []string{"--no-pads"})
		}
		for _, extra := range variants {
			t.Run(strings.Join(append([]string{b.name}, extra...), ""), func(t *testing.T) {
				b.need(t)
				dir := t.TempDir()
				pb := filepath.Join(dir, "calls.pb.gz")
				args := append([]string{"run", "-q", "--backend", b.name, "--format", "pprof", "-o", pb, "-e", "leaf"}, extra...)
				// 300 ms before exiting: the uprobe engine names frames
				// from the process's maps.
				r := utap(t, append(args, "--", stackChain(t), "3", "300")...)
				if r.code != 0 || r.stdout != "72\n" || r.stderr != "" {
					t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
				}
				data, err := os.ReadFile(pb)
				if err != nil {
					t.Fatal(err)
				}
				p, err := profile.ParseData(data)
				if err != nil {
					t.Fatal(err)
				}
				if len(p.SampleType) != 2 || p.SampleType[0].Type != "calls" || p.SampleType[1].Type != "time" {
					t.Fatalf("sample types %v, want calls and time:\n%s", p.SampleType, p)
				}
				var calls, ns int64
				for _, s := range p.Sample {
					calls += s.Value[0]
					ns += s.Value[1]
					var names []string
					for _, l := range s.Location {
						names = append(names, l.Line[0].Function.Name)
					}
					if len(names) < 4 || strings.Join(names[:4], " < ") != "leaf < c < b < a" {
						t.Errorf("a stack %v, want leaf < c < b < a < ...", names)
					}
				}
				if calls != 3 || ns <= 0 {
					t.Errorf("%d calls, %d ns; want 3 calls, timed:\n%s", calls, ns, p)
				}
				cmd := exec.Command("go", "tool", "pprof", "-top", pb)
				cmd.Env = append(os.Environ(), "PPROF_TMPDIR="+dir)
				top, err := cmd.CombinedOutput()
				if err != nil || !strings.Contains(string(top), "of 3 total") {
					t.Fatalf("go tool pprof -top: %v:\n%s", err, top)
				}
				for _, fn := range []string{"leaf", "c", "b", "a", "main"} {
					if !strings.Contains(string(top), " "+fn+"\n") {
						t.Errorf("no %s in go tool pprof -top:\n%s", fn, top)
					}
				}
				if extra == nil {
					flameSVG(t, b.name, dir)
				}
			})
		}
	}
}

// flameSVG checks --format flamegraph: well-formed, leaf's 3 calls.
func flameSVG(t *testing.T, backend, dir string) {
	svg := filepath.Join(dir, "calls.svg")
	r := utap(t, "run", "-q", "--backend", backend, "--format", "flamegraph", "-o", svg, "-e", "leaf", "--", stackChain(t), "3", "300")
	data, err := os.ReadFile(svg)
	if r.code != 0 || err != nil {
		t.Fatalf("exit %d, stderr %q, %v", r.code, r.stderr, err)
	}
	if err := xml.NewDecoder(bytes.NewReader(data)).Decode(new(struct{})); err != nil {
		t.Fatalf("not XML: %v\n%s", err, data)
	}
	for _, want := range []string{"<title>leaf (3 calls, 100.00%)</title>", "<title>main (3 calls, 100.00%)</title>"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("no %s in the flame graph:\n%s", want, data)
		}
	}
}
