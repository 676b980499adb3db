package pads

import "github.com/utap/utap/internal/pad"

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

// Window is the ring indexes [from, to) in which records with fs are
// a vfork child's.
type Window struct {
	ring     *Ring
	fs       uint64
	from, to uint64
	pid      int
	report   bool // the child is followed: its records are its events
}

// VforkBegin opens the window of child pid (report: followed) in r at the
// vfork event of its parent's thread with fs base fs, before the child
// runs; nil if r is gone. A counting trace's pads write records meanwhile
// (pad.OffDivert): a counter cannot say whose call it was.
func (d *Drainer) VforkBegin(r *Ring, fs uint64, pid int, report bool) *Window {
	d.mu.Lock()
	defer d.mu.Unlock()
	if r.gone {
		return nil
	}
	w := &Window{ring: r, fs: fs, from: r.r.Reserved(), to: windowOpen, pid: pid, report: report}
	r.vforks = append(r.vforks, w)
	r.r.Divert(1)
	return w
}

// VforkEnd closes w once its child is done with the memory: at the
// parent's vfork-done, the child's exec or exit, whichever is seen first.
func (d *Drainer) VforkEnd(w *Window) {
	if w == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
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
func (r *Ring) vforkOf(rec *pad.Record) *Window {
	var in *Window
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
