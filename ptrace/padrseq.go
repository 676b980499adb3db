//go:build linux && amd64

package ptrace

import (
	"golang.org/x/sys/unix"

	"github.com/utap/utap/internal/pad"
	"github.com/utap/utap/internal/proc"
)

// rseqOn publishes in p's ring, once, where a thread's struct rseq lies
// from its fs base, as the kernel has th's registered: a counting
// trace's return pads add to per-CPU tallies from then on (pad/rseq.go).
// Only a registration with the signature the pads' abort handlers carry
// (glibc's); before one (a program not yet through its libc's start, no
// rseq at all) the pads keep their locked adds, and a later placement
// asks again.
func (pd *padEngine) rseqOn(p *process, th *thread) {
	r := p.pads.ring
	if !pd.d.Tally() || r == nil || !r.Mapped() || r.Rseq() != 0 {
		return
	}
	c, err := proc.GetRseq(th.tid)
	if err != nil || c.Addr == 0 || c.Sig != pad.RseqSig || c.Size < 32 {
		return
	}
	var regs unix.PtraceRegs
	if proc.GetRegs(th.tid, &regs) != nil || regs.Fs_base == 0 || c.Addr == regs.Fs_base {
		return
	}
	r.SetRseq(c.Addr - regs.Fs_base)
	pd.sayf("pid %d: the return pads' tallies per CPU (its threads' rseq at fs%+#x)", p.pid, int64(c.Addr-regs.Fs_base))
}
