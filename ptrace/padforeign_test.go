//go:build linux && amd64

package ptrace

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/probe"
)

// tracefsUprobe is a uprobe of tracefs's uprobe_events: another tracer's.
type tracefsUprobe struct {
	dir, name string
}

// addUprobe puts an enabled uprobe on bin at file offset off; it is taken
// out when the test ends.
func addUprobe(t *testing.T, dir, name, bin string, off uint64) *tracefsUprobe {
	t.Helper()
	u := &tracefsUprobe{dir: dir, name: name}
	if err := u.write("uprobe_events", fmt.Sprintf("p:utaptest/%s %s:%#x", name, bin, off)); err != nil {
		t.Fatalf("adding a uprobe: %v", err)
	}
	t.Cleanup(func() {
		u.write("events/utaptest/"+name+"/enable", "0")
		u.write("uprobe_events", "-:utaptest/"+name)
	})
	if err := u.write("events/utaptest/"+name+"/enable", "1"); err != nil {
		t.Fatalf("enabling the uprobe: %v", err)
	}
	return u
}

func (u *tracefsUprobe) write(file, line string) error {
	f, err := os.OpenFile(filepath.Join(u.dir, file), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.WriteString(line + "\n")
	return err
}

// hits reads the uprobe's hit count from uprobe_profile.
func (u *tracefsUprobe) hits() int {
	f, err := os.Open(filepath.Join(u.dir, "uprobe_profile"))
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) >= 3 && (fs[1] == u.name || fs[1] == "utaptest/"+u.name) {
			var n int
			fmt.Sscan(fs[2], &n)
			return n
		}
	}
	return -1
}

// TestPadForeignUprobe: another tracer's uprobe (tracefs) on a probed
// entry, placed after utap's pad is in (it used to kill the tracee with
// SIGSEGV, silently: the kernel resumes after the file's first
// instruction, inside our jmp) or before utap starts. The tracee lives,
// its output and status as untraced, the uprobe is hit, and with pads
// utap says what happened at the site.
func TestPadForeignUprobe(t *testing.T) {
	dir := need.TracefsUprobes(t)
	bin := fixture.C(t, "pt_uprobe.c", "-O1")
	site := siteAt(t, bin, "work", 0)
	const calls = 2000
	want := fmt.Sprintf("sum %d\n", calls*(calls-1)/2+calls)
	for _, after := range []bool{true, false} {
		for _, noPads := range []bool{false, true} {
			name := fmt.Sprintf("after%v_nopads%v", after, noPads)
			t.Run(name, func(t *testing.T) {
				// Unique on the machine: other tests' uprobes share tracefs.
				name := fmt.Sprintf("p%d_%s", os.Getpid(), name)
				flag := filepath.Join(t.TempDir(), "flag")
				var u *tracefsUprobe
				if !after {
					u = addUprobe(t, dir, name, bin, site.FileOffset)
					os.WriteFile(flag, nil, 0o644)
				}
				var once sync.Once
				added := make(chan *tracefsUprobe, 1)
				var out bytes.Buffer
				target := probe.Target{Argv: []string{bin, flag, fmt.Sprint(calls)}, Stdout: &out}
				res, err := (&Engine{NoPads: noPads}).Trace(context.Background(), target, []probe.Site{site}, func(e *probe.Event) {
					if after {
						// The probe is in and hit: now the other tracer.
						once.Do(func() {
							go func() {
								u := addUprobe(t, dir, name, bin, site.FileOffset)
								os.WriteFile(flag, nil, 0o644)
								added <- u
							}()
						})
					}
				})
				if err != nil {
					t.Fatalf("Trace: %v", err)
				}
				if after {
					u = <-added
				}
				if res.ExitCode != 0 || out.String() != want {
					t.Fatalf("exit %d, output %q; want 0, %q (notices %q)", res.ExitCode, out.String(), want, res.Notices)
				}
				if n := u.hits(); n < calls {
					t.Errorf("the uprobe was hit %d times, want at least %d", n, calls)
				}
				said := strings.Contains(strings.Join(res.Notices, "\n"), "work+0x0 at ")
				if !noPads && !said {
					t.Errorf("no line about the site: notices %q", res.Notices)
				}
				t.Logf("notices %q", res.Notices)
			})
		}
	}
}
