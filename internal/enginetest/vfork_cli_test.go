//go:build linux && amd64

package enginetest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestCLIVforkChild (#21): the command calls work(1, i) n times, runs a
// child that shares its memory (vfork, whose child calls work(2, i) m
// times; system and posix_spawn, CLONE_VM|CLONE_VFORK, whose child
// execs et_execer count m: work(3, i)), then calls work(1, i) n times
// more. The command's calls are exactly its 2n, every one under its pid
// and tid, on every engine, with pads and without. Without -f the child's
// calls are not shown (a vfork child writes into its parent's pads' ring,
// with the parent's thread's fs base); with -f they are, under the
// child's pid.
func TestCLIVforkChild(t *testing.T) {
	bin := etExecer(t)
	type variant struct {
		name, backend string
		flags         []string
		pads          bool
	}
	variants := []variant{
		{"pads", "ptrace", []string{"-v"}, true},
		{"no-pads", "ptrace", []string{"-q", "--no-pads"}, false},
		{"uprobe", "uprobe", []string{"-q"}, false},
	}
	const n, m = 500, 20
	for _, how := range []string{"vfork", "system", "spawn"} {
		argv := []string{bin, "around", strconv.Itoa(n), how, strconv.Itoa(m)}
		stdout, _ := untraced(t, argv)
		for _, v := range variants {
			for _, follow := range []bool{false, true} {
				// sh has no work, and a followed image must match every spec.
				if follow && how == "system" {
					continue
				}
				name := how + "/" + v.name
				if follow {
					name += "/-f"
				}
				t.Run(name, func(t *testing.T) {
					needBackend(t, v.backend)
					// The child's calls: none seen without -f.
					child := 0
					if follow {
						child = m
					}
					out := filepath.Join(t.TempDir(), "out")
					args := append([]string{"run", "--backend", v.backend, "--format", "json", "-o", out}, v.flags...)
					if follow {
						args = append(args, "-f")
					}
					run := func(mode string, spec string) string {
						t.Helper()
						r := utap(t, append(append(args, mode, "-e", spec, "--"), argv...)...)
						if r.stdout != stdout || r.code != 0 {
							t.Fatalf("%s: exit %d, stdout %q; want %q\n%s", mode, r.code, r.stdout, stdout, r.stderr)
						}
						if v.pads && !strings.Contains(r.stderr, "work+0x0 at") || v.pads && !strings.Contains(r.stderr, "in-process pad") {
							t.Fatalf("%s: work has no pad:\n%s", mode, r.stderr)
						}
						b, err := os.ReadFile(out)
						if err != nil {
							t.Fatal(err)
						}
						return string(b)
					}
					checkVforkEvents(t, run("--entry-only", "work(arg1)"), n, child)
					var rep struct {
						Functions []struct {
							Function string
							Calls    int
						}
					}
					if s := run("--count-only", "work"); json.Unmarshal([]byte(s), &rep) != nil {
						t.Fatalf("not a summary: %q", s)
					}
					if len(rep.Functions) != 1 || rep.Functions[0].Calls != 2*n+child {
						t.Errorf("--count-only: %+v, want work %d", rep.Functions, 2*n+child)
					}
				})
			}
		}
	}
}

// checkVforkEvents checks TestCLIVforkChild's events: 2n work(1) under
// one pid, its tid too, and `child` calls with another first argument
// under another pid.
func checkVforkEvents(t *testing.T, lines string, n, child int) {
	t.Helper()
	parent, seen, others := 0, 0, 0
	for _, l := range strings.Split(strings.TrimSpace(lines), "\n") {
		var ev struct {
			PID, TID int
			Args     []int64
		}
		if err := json.Unmarshal([]byte(l), &ev); err != nil || len(ev.Args) != 1 {
			t.Fatalf("%v: %q", err, l)
		}
		if parent == 0 {
			parent = ev.PID // its first call comes first
		}
		switch {
		case ev.Args[0] == 1 && ev.PID == parent && ev.TID == parent:
			seen++
		case ev.Args[0] != 1 && ev.PID != parent && ev.TID == ev.PID:
			others++
		default:
			t.Fatalf("pid %d tid %d work(%d) in a command of pid %d", ev.PID, ev.TID, ev.Args[0], parent)
		}
	}
	if seen != 2*n || others != child {
		t.Fatalf("%d calls of the command, %d of its child; want %d, %d", seen, others, 2*n, child)
	}
}
