//go:build linux && amd64

package enginetest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/utap/utap/probe"
)

// TestAttachDetachChurn attaches, counts for 10 ms and detaches, again and
// again, on a process whose threads start and end all the time. Every
// cycle must succeed and leave the process running. The ptrace engine used
// to run its injected mmap in a thread stopped at its clone event, whose
// clone then returned ENOSYS: pthread_create made a second thread on the
// first one's stack (SIGSEGV, or the main thread exiting as a child); it
// also lost interrupts (detach hung) and refused exiting threads.
func TestAttachDetachChurn(t *testing.T) {
	bin := etWork(t)
	for _, eng := range engines() {
		t.Run(eng.Name(), func(t *testing.T) {
			needEngine(t, eng)
			tr := startTracee(t, "ready", bin, "churn")
			_, sites := resolvePID(t, tr.pid, "work")
			for i := range 40 {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
				_, err := eng.Trace(ctx, probe.Target{PIDs: []int{tr.pid}, Tally: true}, sites, func(*probe.Event) {})
				cancel()
				if err != nil {
					t.Fatalf("cycle %d: %v", i, err)
				}
				st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", tr.pid))
				// The state follows the command name, in parentheses.
				if _, after, _ := strings.Cut(string(st), ") "); !strings.HasPrefix(after, "S") && !strings.HasPrefix(after, "R") {
					t.Fatalf("cycle %d: the process is in state %.1s", i, after)
				}
			}
		})
	}
}
