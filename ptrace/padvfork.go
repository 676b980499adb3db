//go:build linux && amd64

package ptrace

import (
	"golang.org/x/sys/unix"

	"github.com/utap/utap/internal/pad"
	"github.com/utap/utap/internal/proc"
)

// A vfork child (vfork, posix_spawn, system: CLONE_VM|CLONE_VFORK) runs
// in its parent's memory, pads and ring included, with the forking
// thread's fs base: its records look like that thread's. That thread is
// blocked from its vfork event, where the child has not run yet, to its
// vfork-done event, where the child has released the memory (exec or
// exit) and the thread has not run again. So the records with its fs
// base reserved between the two are the child's, and no others: exact,
// whatever the other threads do meanwhile.

// windowOpen marks a window whose child still runs.
const windowOpen = ^uint64(0)

// vforkWindow is the ring indexes [from, to) in which records with fs are
// a vfork child's.
type vforkWindow struct {
	ring     *padRing
	fs       uint64
	from, to uint64
	pid      int
	report   bool // the child is followed: its records are its events
}

// vforkBegin opens child's window at the vfork event of th, its parent's
// thread, before the child runs. A counting trace's pads write records
// meanwhile (pad.OffDivert): a counter cannot say whose call it was.
func (pd *pads) vforkBegin(th *thread, child *process) {
	pp := th.p.pads
	if pp == nil || pp.ring == nil || pp.ring.view == nil {
		return
	}
	var regs unix.PtraceRegs
	if proc.GetRegs(th.tid, &regs) != nil {
		return
	}
	r := pp.ring
	pd.mu.Lock()
	defer pd.mu.Unlock()
	if r.gone {
		return
	}
	w := &vforkWindow{ring: r, fs: regs.Fs_base, from: r.r.Reserved(), to: windowOpen, pid: child.pid, report: child.report}
	r.vforks = append(r.vforks, w)
	r.r.Divert(1)
	th.vforkWin, child.vforkWin = w, w
}

// vforkEnd closes w once its child is done with the memory: at the
// parent's vfork-done, the child's exec or exit, whichever is seen first.
func (pd *pads) vforkEnd(w *vforkWindow) {
	if w == nil {
		return
	}
	pd.mu.Lock()
	defer pd.mu.Unlock()
	if w.to != windowOpen {
		return
	}
	w.to = w.ring.r.Reserved()
	if !w.ring.gone {
		w.ring.r.Divert(-1)
	}
}

// vforkOf returns the window in which rec was a vfork child's, nil if it
// is the process's own; the innermost, for a child's own vfork child.
// Records come in index order: a closed window behind rec is dropped.
func (r *padRing) vforkOf(rec *pad.Record) *vforkWindow {
	var in *vforkWindow
	for i := 0; i < len(r.vforks); {
		w := r.vforks[i]
		if rec.Index >= w.to {
			r.vforks = append(r.vforks[:i], r.vforks[i+1:]...)
			continue
		}
		if rec.FS == w.fs && rec.Index >= w.from && (in == nil || w.from > in.from) {
			in = w
		}
		i++
	}
	return in
}
