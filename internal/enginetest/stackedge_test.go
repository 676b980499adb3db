//go:build linux && amd64

package enginetest

import (
	"testing"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/probe"
	"github.com/utap/utap/ptrace"
	"github.com/utap/utap/uprobe"
)

func etStack(t *testing.T) string { return fixture.C(t, "et_stack.c") }

// edgeEngines are the engines of the stack-edge tests: the ptrace engine
// with and without pads (an entry probe's pad pushes natively), uprobes.
func edgeEngines() []struct {
	name string
	eng  probe.Engine
} {
	return []struct {
		name string
		eng  probe.Engine
	}{{"ptrace", &ptrace.Engine{}}, {"ptrace-nopads", &ptrace.Engine{NoPads: true}}, {"uprobe", &uprobe.Engine{}}}
}

// TestEmulatedStackEdge: a probed call or push that is the program's
// first store to a page of the main thread's stack not mapped yet runs as
// untraced (the kernel grows the stack), and one the CPU faults on faults
// alike: same signal, si_code and si_addr. The ptrace engine emulates
// them, and its ptrace writes neither grow a stack nor fault as the CPU:
// it failed ("pushing to 0x7ffe...: bad address"), the program died of
// SIGILL, or ran on where it should have faulted.
func TestEmulatedStackEdge(t *testing.T) {
	bin := etStack(t)
	cases := []struct {
		name   string
		probes []string
		argv   []string
		events int
	}{
		// The call in a 1 MiB frame pushes 1 MiB below the stack's pages.
		{"bigframe", []string{"bigframe+11"}, []string{bin, "bigframe"}, 1},
		// Each level's first push is on a new page.
		{"rec", []string{"rec"}, []string{bin, "rec", "600"}, 601},
		// A call and a push with rsp at an unmapped page, a call through
		// a pointer to it, a ret reading it, and a call below the stack
		// where a mapping in the guard gap bars growth.
		{"emuguard", []string{"pushy", "pushr", "callmem+7", "retbad+4"}, []string{bin, "emuguard"}, 5},
	}
	for _, e := range edgeEngines() {
		t.Run(e.name, func(t *testing.T) {
			needEngine(t, e.eng)
			for _, c := range cases {
				want, code := untraced(t, c.argv)
				o, err := traceRun(e.eng, c.probes, c.argv, false)
				if err != nil {
					t.Errorf("%s: %v", c.name, err)
					continue
				}
				if o.stdout != want || o.res.ExitCode != code || len(o.events) != c.events {
					t.Errorf("%s: output %q, exit %d, %d events; untraced %q, exit %d, and %d events",
						c.name, o.stdout, o.res.ExitCode, len(o.events), want, code, c.events)
				}
			}
		})
	}
}
