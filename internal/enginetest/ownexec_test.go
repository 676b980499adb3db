//go:build linux && amd64

package enginetest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/utap/utap/probe"
	"github.com/utap/utap/ptrace"
	"github.com/utap/utap/uprobe"
)

// Without -f, the traced process itself is traced on through its execve
// (same pid), as strace does (issue #21): et_execer calls work(1, i)
// 1,000 times and execs et_execee, whose own work(2, i) runs 500 times.

// ownExecArgv is that command line.
func ownExecArgv(t *testing.T) []string {
	return []string{etExecer(t), "exec", "1000", etExecee(t), "count", "500"}
}

// ownExecEngines are the engines, the ptrace engine with and without pads.
func ownExecEngines() []struct {
	name string
	eng  probe.Engine
} {
	return []struct {
		name string
		eng  probe.Engine
	}{
		{"ptrace", &ptrace.Engine{}},
		{"ptrace-nopads", &ptrace.Engine{NoPads: true}},
		{"uprobe", &uprobe.Engine{}},
	}
}

// TestOwnExec: every call of both images is seen, in one pid.
func TestOwnExec(t *testing.T) {
	for _, e := range ownExecEngines() {
		t.Run(e.name, func(t *testing.T) {
			needEngine(t, e.eng)
			b := behaviour{fixture: etExecer, argsOf: func(t *testing.T) []string { return ownExecArgv(t)[1:] },
				specs: []string{"work(a, b)"}, check: wantImages(map[uint64]int{1: 1000, 2: 500}, false)}
			runBehaviour(t, e.eng, b)
		})
	}
}

// TestOwnExecAttached: attached without -f to a process that then execs,
// its 100 calls before and the new image's 1,000 are all seen.
func TestOwnExecAttached(t *testing.T) {
	for _, e := range ownExecEngines() {
		t.Run(e.name, func(t *testing.T) { execAttached(t, e.eng, false) })
	}
}

// TestCLIOwnExec: `utap run -e work` counts 1,500 calls on every backend,
// with --count-only and in event lines, and says nothing about it.
func TestCLIOwnExec(t *testing.T) {
	argv := ownExecArgv(t)
	stdout, _ := untraced(t, argv)
	for _, b := range backends {
		for _, pads := range []string{"", "--no-pads"} {
			if pads != "" && b.name != "ptrace" {
				continue
			}
			name := strings.TrimSpace(b.name + " " + pads)
			t.Run(name+"/count-only", func(t *testing.T) {
				b.need(t)
				args := []string{"run", "-q", "--backend", b.name, "--count-only", "--format", "json", "-e", "work"}
				if pads != "" {
					args = append(args, pads)
				}
				r := utap(t, append(append(args, "--"), argv...)...)
				if r.stdout != stdout || r.code != 0 {
					t.Fatalf("exit %d, stdout %q; want %q", r.code, r.stdout, stdout)
				}
				var rep struct {
					Functions []struct {
						Function string
						Calls    uint64
					}
				}
				if err := json.Unmarshal([]byte(r.stderr), &rep); err != nil {
					t.Fatalf("%v: %q", err, r.stderr)
				}
				if len(rep.Functions) != 1 || rep.Functions[0].Calls != 1500 {
					t.Errorf("got %+v, want 1500 calls of work", rep.Functions)
				}
			})
			t.Run(name+"/events", func(t *testing.T) {
				b.need(t)
				out := filepath.Join(t.TempDir(), "events")
				args := []string{"run", "--backend", b.name, "-q", "-o", out, "-e", "work"}
				if pads != "" {
					args = append(args, pads)
				}
				r := utap(t, append(append(args, "--"), argv...)...)
				if r.stdout != stdout || r.code != 0 || r.stderr != "" {
					t.Fatalf("exit %d, stdout %q, stderr %q; want exit 0, stdout %q, no stderr", r.code, r.stdout, r.stderr, stdout)
				}
				events, err := os.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				// The calls, and the process's end as ltrace shows it.
				if n := strings.Count(string(events), "\n"); n != 1501 || !strings.Contains(string(events), "+++ exited (status 0) +++") {
					t.Errorf("%d event lines, want 1500 and the end", n)
				}
			})
		}
	}
}
