//go:build linux && amd64

package enginetest

import (
	"bytes"
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/utap/utap/elfsym"
	"github.com/utap/utap/probe"
)

// TestSignalFlood: 20,000 signals sent back to back at a process whose
// probed function runs hot, then SIGUSR2 to stop it. Standard (SIGUSR1)
// and real-time signals, which queue: every one is handled, as untraced.
// The ptrace engine used to livelock re-sending a second signal that came
// while it held one for a slot, dequeued again before the slot ran.
func TestSignalFlood(t *testing.T) {
	bin := etWork(t)
	for _, eng := range engines() {
		t.Run(eng.Name(), func(t *testing.T) {
			needEngine(t, eng)
			for _, kind := range []string{"usr1", "rt"} {
				argv := []string{bin, "flood", "20000", kind}
				want, _ := untraced(t, argv)
				specs, err := parseSpecs([]string{"work(arg1)"})
				if err != nil {
					t.Fatal(err)
				}
				sites, err := elfsym.Resolve(specs, elfsym.Target{Exe: bin})
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				var out bytes.Buffer
				var n atomic.Int64
				res, err := eng.Trace(ctx, probe.Target{Argv: argv, Stdout: &out}, sites, func(*probe.Event) { n.Add(1) })
				expired := ctx.Err() != nil
				cancel()
				switch {
				case err != nil:
					t.Fatalf("%s: %v", kind, err)
				case expired:
					t.Fatalf("%s: still running after a minute (%d calls seen)", kind, n.Load())
				case res.ExitCode != 0 || out.String() != want:
					t.Errorf("%s: exit %d, output %q; untraced %q", kind, res.ExitCode, out.String(), want)
				}
				t.Logf("%s: %d calls traced", kind, n.Load())
			}
		})
	}
}

// TestEmulatedStoreFaults: a probed call whose push lands on a read-only
// page faults as it does untraced — SIGSEGV at the call, si_addr the stack
// slot — though the ptrace engine emulates the call and its memory writes
// could write the page (they used to, and the program ran on as if fine).
func TestEmulatedStoreFaults(t *testing.T) {
	bin := etWork(t)
	argv := []string{bin, "guard"}
	want, code := untraced(t, argv)
	for _, eng := range engines() {
		t.Run(eng.Name(), func(t *testing.T) {
			needEngine(t, eng)
			o, err := traceRun(eng, []string{"pushy"}, argv, false)
			if err != nil {
				t.Fatal(err)
			}
			if o.stdout != want || o.res.ExitCode != code || len(o.events) != 1 {
				t.Errorf("output %q, exit %d, %d events; untraced %q, exit %d, and one call", o.stdout, o.res.ExitCode, len(o.events), want, code)
			}
		})
	}
}
