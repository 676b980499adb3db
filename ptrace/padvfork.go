//go:build linux && amd64

package ptrace

import (
	"encoding/binary"

	"golang.org/x/sys/unix"

	"github.com/utap/utap/internal/pad"
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
	if pp == nil {
		return
	}
	var regs unix.PtraceRegs
	if proc.GetRegs(th.tid, &regs) != nil {
		return
	}
	vforkShadow(th, regs.Fs_base)
	if pp.ring == nil || !pp.ring.Mapped() {
		return
	}
	if w := pd.d.VforkBegin(pp.ring, regs.Fs_base, child.pid, child.report); w != nil {
		th.vforkWin, child.vforkWin = w, w
	}
}

// vforkEnd closes w once its child is done with the memory: at the
// parent's vfork-done, the child's exec or exit, whichever is seen first.
func (pd *padEngine) vforkEnd(w *pads.Window) { pd.d.VforkEnd(w) }

// A vfork child also returns through its parent's thread's shadow stack:
// its return from vfork (a return pad) pops the parent's entry for that
// call, and its next calls (execve's) overwrite it, so the parent's own
// return from vfork would find no entry and stop the process (the return
// pad's ud2). The kernel copies a uretprobe's return instances to a vfork
// child for the same reason. The child can only pop the frames above the
// vfork's caller, one entry at most, so the count and that entry, saved
// before the child runs and put back once it is done, are the parent's
// stack as it was.

// shadowTop is a thread's shadow stack's count and top entry (none when
// the count is 0: the count alone takes back what the child left, an
// execve's entry).
type shadowTop struct {
	slot uint64 // the thread's slot in the shadow area
	buf  [8 + pad.ShadowEntry]byte
	n    uint64 // the count; the entry is the one below it
}

// vforkShadow saves th's shadow stack top at its vfork event.
func vforkShadow(th *thread, fs uint64) {
	p := th.p
	if p.pads == nil || p.pads.shadow.addr == 0 {
		return
	}
	sh := p.pads.shadow
	slot, n, err := pad.ShadowSlot(p.mem.ReadAt, sh.addr, sh.depth, fs)
	if err != nil || slot == 0 {
		return
	}
	t := &shadowTop{slot: slot, n: n}
	binary.LittleEndian.PutUint64(t.buf[:8], t.n)
	if t.n > 0 && p.mem.ReadAt(t.buf[8:], t.entry()) != nil {
		return
	}
	th.vforkTop = t
}

func (t *shadowTop) entry() uint64 { return pad.ShadowEntryAt(t.slot, t.n-1) }

// vforkShadowBack puts th's shadow stack top back at its vfork-done,
// before it runs again.
func vforkShadowBack(th *thread) {
	t := th.vforkTop
	th.vforkTop = nil
	if t == nil || th.p.pads == nil || th.p.pads.shadow.addr == 0 {
		return
	}
	if t.n > 0 {
		th.p.mem.WriteAt(t.buf[8:], t.entry())
	}
	th.p.mem.WriteAt(t.buf[:8], pad.ShadowCountAt(t.slot))
}
