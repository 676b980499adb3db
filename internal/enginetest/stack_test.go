package enginetest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/probe"
)

// stackChain is main → a → b → c → leaf with frame pointers everywhere,
// so that the kernel's frame-pointer walk (uprobe) and the DWARF CFI walk
// (ptrace) must find the same frames.
func stackChain(t *testing.T) string {
	return fixture.C(t, "stack_chain.c", "-O1", "-g", "-fno-omit-frame-pointer")
}

// stackEvents runs -k with JSON output on backend and returns each
// event's probe and its frames up to main, as "func+0xoff file:line".
func stackEvents(t *testing.T, backend string, specs ...string) []string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "events")
	args := []string{"run", "--backend", backend, "-k", "--format", "json", "-o", out}
	for _, s := range specs {
		args = append(args, "-e", s)
	}
	// The command waits 300 ms before exiting: the uprobe engine's events
	// are named from the process's maps, which must still be there.
	r := utap(t, append(args, "--", stackChain(t), "3", "300")...)
	if r.code != 0 || r.stdout != "72\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev struct {
			Kind, Func string
			Stack      []probe.Frame
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("%v: %s", err, sc.Text())
		}
		var fs []string
		for _, f := range ev.Stack {
			fs = append(fs, fmt.Sprintf("%s+%#x %s:%d", f.Func, f.Offset, f.File, f.Line))
			if f.Func == "main" {
				break
			}
		}
		got = append(got, ev.Kind+" "+ev.Func+": "+strings.Join(fs, " < "))
	}
	return got
}

// TestCLIStackParity: -k gives the same frames, named the same, on both
// engines, with the calls of b hijacked by return probes (the ptrace
// engine's trampoline and the kernel's uretprobe trampoline must both show
// the real return address).
func TestCLIStackParity(t *testing.T) {
	for _, c := range []struct {
		name  string
		specs []string
	}{
		{"entry", []string{"leaf"}},
		{"returns", []string{"leaf", "return:b"}},
	} {
		var first []string
		for _, b := range backends {
			t.Run(c.name+"/"+b.name, func(t *testing.T) {
				b.need(t)
				got := stackEvents(t, b.name, c.specs...)
				var leaves int
				for _, l := range got {
					if strings.HasPrefix(l, "entry leaf: ") {
						leaves++
						want := "entry leaf: leaf+0x0 stack_chain.c:19 < c+0x9 stack_chain.c:24 < b+0xc stack_chain.c:25 < a+0xc stack_chain.c:26 < main+"
						if !strings.HasPrefix(l, want) {
							t.Errorf("got  %s\nwant %s...", l, want)
						}
					}
				}
				if leaves != 3 {
					t.Errorf("%d leaf events, want 3:\n%s", leaves, strings.Join(got, "\n"))
				}
				if first == nil {
					first = got
				} else if strings.Join(got, "\n") != strings.Join(first, "\n") {
					t.Errorf("stacks differ from %s's:\n%s\nvs\n%s", backends[0].name, strings.Join(got, "\n"), strings.Join(first, "\n"))
				}
			})
		}
	}
}

// TestCLIStackText: text output shows the frames under the event line, as
// strace -k, and --stack-depth bounds them.
func TestCLIStackText(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			b.need(t)
			bin := stackChain(t)
			out := filepath.Join(t.TempDir(), "events")
			r := utap(t, "run", "--backend", b.name, "-k", "--stack-depth", "3", "--entry-only", "-o", out, "-e", "leaf(arg1)", "--", bin, "1", "300")
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
			// The event, its frames, and the process's end.
			if r.code != 0 || len(lines) != 5 || !strings.HasSuffix(lines[4], "+++ exited (status 0) +++") {
				t.Fatalf("exit %d, stderr %q, events:\n%s", r.code, r.stderr, data)
			}
			want := []string{"leaf(2)", " > " + bin + "(leaf+0x0) [0x", " > " + bin + "(c+0x9) [0x", " > " + bin + "(b+0xc) [0x"}
			for i, w := range want {
				if !strings.Contains(lines[i], w) {
					t.Errorf("line %d %q, want %q in it", i, lines[i], w)
				}
			}
			if !strings.HasSuffix(lines[1], "] at stack_chain.c:19") {
				t.Errorf("line 1 %q: want the source line", lines[1])
			}
		})
	}
}
