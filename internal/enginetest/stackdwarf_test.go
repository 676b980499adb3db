package enginetest

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/probe"
)

// kFrames runs utap with -k and JSON output on backend and returns each
// event's frames as "object:func" up to main (the whole stack when main
// is not named: a stripped executable), addresses left out (ASLR).
func kFrames(t *testing.T, backend string, args ...string) []string {
	t.Helper()
	data, _ := utapOut(t, append([]string{"run", "--backend", backend, "-k", "--stack-depth", "64", "--format", "json"}, args...)...)
	var got []string
	sc := bufio.NewScanner(strings.NewReader(data))
	sc.Buffer(nil, 1<<22)
	for sc.Scan() {
		var ev struct {
			Func  string
			Stack []probe.Frame
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("%v: %s", err, sc.Text())
		}
		fs := []string{ev.Func + ":"}
		for _, f := range ev.Stack {
			fs = append(fs, filepath.Base(f.Object)+":"+f.Func)
			if f.Func == "main" {
				break
			}
		}
		got = append(got, strings.Join(fs, " < "))
	}
	return got
}

// sameStacks compares two engines' events one for one and returns the
// share of identical stacks, logging the first differences.
func sameStacks(t *testing.T, pt, up []string) float64 {
	t.Helper()
	if len(pt) != len(up) || len(pt) == 0 {
		t.Fatalf("%d events on ptrace, %d on uprobe", len(pt), len(up))
	}
	same, shown := 0, 0
	for i := range pt {
		if pt[i] == up[i] {
			same++
		} else if shown++; shown <= 5 {
			t.Logf("event %d:\n ptrace %s\n uprobe %s", i, pt[i], up[i])
		}
	}
	share := float64(same) / float64(len(pt))
	t.Logf("%d of %d stacks identical (%.1f%%)", same, len(pt), 100*share)
	return share
}

// TestCLIStackParityDwarf: the uprobe engine's stacks (registers and
// stack copied by the kernel, unwound with DWARF CFI in user space) equal
// the ptrace engine's, event for event, where the kernel's frame-pointer
// walk could not: a chain built without frame pointers, and libc's malloc
// called from all over sort, a short-lived command whose frames are named
// from the maps it had.
func TestCLIStackParityDwarf(t *testing.T) {
	for _, b := range backends {
		b.need(t)
	}
	noFP := fixture.C(t, "stack_chain.c", "-O2", "-g", "-fomit-frame-pointer")
	input := filepath.Join(t.TempDir(), "small.txt")
	if err := os.WriteFile(input, []byte("pear\napple\nfig\nbanana\ncherry\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sortBin, err := exec.LookPath("sort")
	if err != nil {
		t.Skip("no sort")
	}
	for _, c := range []struct {
		name string
		args []string
		min  float64
	}{
		{"nofp", []string{"-e", "leaf", "--", noFP, "3"}, 1},
		{"nofp-returns", []string{"-e", "leaf", "-e", "return:b", "--", noFP, "3"}, 1},
		{"sort-malloc", []string{"--entry-only", "-e", "libc:malloc", "--", sortBin, input}, 0.95},
	} {
		t.Run(c.name, func(t *testing.T) {
			pt := kFrames(t, "ptrace", c.args...)
			up := kFrames(t, "uprobe", c.args...)
			if share := sameStacks(t, pt, up); share < c.min {
				t.Errorf("%.1f%% of stacks identical, want %.0f%%", 100*share, 100*c.min)
			}
			for _, l := range up {
				if strings.HasPrefix(l, "leaf:") && (!strings.Contains(l, ":c < ") || !strings.Contains(l, ":b < ") || !strings.HasSuffix(l, ":a < "+filepath.Base(noFP)+":main")) {
					t.Errorf("uprobe: %s", l)
				}
			}
		})
	}
}

// TestCLIStackSyscall: -k on system calls shows the stack of the call
// under its strace line, on both engines and both stack modes.
func TestCLIStackSyscall(t *testing.T) {
	bin := stackChain(t)
	for _, b := range backends {
		for _, mode := range []string{"dwarf", "fp"} {
			if b.name == "ptrace" && mode == "fp" {
				continue
			}
			t.Run(b.name+"/"+mode, func(t *testing.T) {
				b.need(t)
				out := filepath.Join(t.TempDir(), "events")
				r := utap(t, "run", "--backend", b.name, "-k", "--stack-mode", mode, "-o", out, "-e", "trace=nanosleep,clock_nanosleep", "--", bin, "1", "300")
				data, err := os.ReadFile(out)
				if err != nil || r.code != 0 {
					t.Fatalf("exit %d, stderr %q, %v", r.code, r.stderr, err)
				}
				text := string(data)
				i := strings.Index(text, "nanosleep(")
				if i < 0 {
					t.Fatalf("no nanosleep line:\n%s", text)
				}
				lines := strings.Split(text[i:], "\n")
				if len(lines) < 2 || !strings.HasPrefix(lines[1], " > ") {
					t.Fatalf("no stack under the call:\n%s", text)
				}
				// The kernel's frame-pointer walk may stop in libc.
				if mode == "dwarf" && !strings.Contains(text[i:], "(main+") {
					t.Errorf("no stack down to main under the call:\n%s", text)
				}
			})
		}
	}
}
