//go:build linux && amd64

package ptrace

import (
	"golang.org/x/sys/unix"

	"github.com/utap/utap/internal/proc"
	"github.com/utap/utap/ptrace/pads"
)

// A vfork child (vfork, posix_spawn, system: CLONE_VM|CLONE_VFORK) runs
// in its parent's memory, pads and ring included, with the forking
// thread's fs base: its records look like that thread's. That thread is
// blocked from its vfork event, where the child has not run yet, to its
// vfork-done event, where the child has released the memory (exec or
// exit) and the thread has not run again. So the records with its fs
// base reserved between the two are the child's, and no others: exact,
// whatever the other threads do meanwhile.

// vforkBegin opens child's window at the vfork event of th, its parent's
// thread, before the child runs. A counting trace's pads write records
// meanwhile (pad.OffDivert): a counter cannot say whose call it was.
func (pd *padEngine) vforkBegin(th *thread, child *process) {
	pp := th.p.pads
	if pp == nil || pp.ring == nil || !pp.ring.Mapped() {
		return
	}
	var regs unix.PtraceRegs
	if proc.GetRegs(th.tid, &regs) != nil {
		return
	}
	if w := pd.d.VforkBegin(pp.ring, regs.Fs_base, child.pid, child.report); w != nil {
		th.vforkWin, child.vforkWin = w, w
	}
}

// vforkEnd closes w once its child is done with the memory: at the
// parent's vfork-done, the child's exec or exit, whichever is seen first.
func (pd *padEngine) vforkEnd(w *pads.Window) { pd.d.VforkEnd(w) }
