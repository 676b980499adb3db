//go:build linux && amd64

package ptrace

import (
	"github.com/utap/utap/internal/proc"
	"golang.org/x/sys/unix"
)

// Waking a halted vCPU is what a stop costs most here: when the tracer
// blocks in wait4 its CPU goes idle, and the tracee's int3 must wake it
// (an IPI, a VM exit and entry) before the tracer can resume the tracee.
// Polling wait4(WNOHANG) for a few microseconds after resuming keeps the
// tracer's CPU busy when the next stop comes that soon, as it does in a
// hot function. The poll is bounded by spinWindow and backs off when it
// does not pay: after k polls in a row that found nothing, the next 2^k
// waits (up to maxBackoff) block at once, so a tracee that stops rarely
// costs almost no CPU.

// spinWindow is how long (ns) the loop polls before blocking; 0 never polls.
var spinWindow int64 = 30_000

const maxBackoff = 64

// poller is the spin state of the loop.
type poller struct {
	skip    int   // waits left that block without polling
	misses  int   // polls in a row that found nothing
	hits    int64 // stops found by polling (stats)
	blocked int64 // waits that blocked (stats)
}

// next waits for the next stop of any tracee.
func (tr *tracer) next() (int, unix.WaitStatus, error) {
	p := &tr.poll
	if spinWindow > 0 && p.skip == 0 {
		start := tr.clock.now()
		for {
			tid, ws, err := proc.WaitNoHang()
			if tid != 0 || err != nil {
				p.misses = 0
				p.hits++
				return tid, ws, err
			}
			if tr.clock.now()-start > spinWindow {
				break
			}
			// The tracee may be queued on this CPU, behind us.
			unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
		}
		p.skip = min(1<<p.misses, maxBackoff)
		p.misses = min(p.misses+1, 6)
	} else if p.skip > 0 {
		p.skip--
	}
	p.blocked++
	return proc.Wait(-1, 0)
}
