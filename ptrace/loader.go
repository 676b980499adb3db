//go:build linux && amd64

package ptrace

import (
	"strings"

	"github.com/utap/utap/internal/proc"
	"github.com/utap/utap/probe"
)

// Libraries loaded after the probes went in (dlopen) get theirs when the
// loader says its link map changed: ld.so calls _dl_debug_state (the
// r_brk of struct r_debug, the hook gdb and ltrace break on) before and
// after each dlopen and dlclose. An internal breakpoint there rescans the
// maps; an executable object that is new gets the probes that resolve in
// it, and its unwinders their breakpoints, while the process is quiesced;
// breakpoints in an object that is gone are forgotten, so that nothing is
// ever written back into code mapped at their addresses since.

// loader puts the probes in once a process image is loaded (armLoaded,
// atLoaded), again at each dlopen (rescan), with the USDT semaphores.
type loader struct {
	tr   *tracer
	elfs map[string]*objInfo // by path, read once
}

// loadProc is a process's loading state.
type loadProc struct {
	armAt uint64           // run mode: the temporary int3 where probes go in (armLoaded)
	armB  byte             // the byte it replaced
	armed bool             // it is in
	armRV *proc.Rendezvous // the loader's, when armAt is its hook; nil at the entry point
	seen  map[object]bool  // objects mapped executable when probes last went in
	// sems are the USDT semaphores incremented in this address space, by
	// runtime address, with the object of their probes (usdt.go).
	sems map[uint64]object
}

// debugStateSym is the loader's r_brk function.
const debugStateSym = "_dl_debug_state"

// execObject names the ELF file behind an executable mapping, if any.
func execObject(m mapping) (object, bool) {
	if !strings.HasPrefix(m.Path, "/") || !m.Exec() {
		return object{}, false
	}
	return object{path: m.Path, inode: m.Inode}, true
}

// execObjects is the set of objects with executable mappings in ms.
func execObjects(ms []mapping) map[object]bool {
	objs := map[object]bool{}
	for _, m := range ms {
		if o, ok := execObject(m); ok {
			objs[o] = true
		}
	}
	return objs
}

// objectAt names the object whose executable mapping holds addr.
func objectAt(ms []mapping, addr uint64) object {
	for _, m := range ms {
		if addr >= m.Start && addr < m.End {
			o, _ := execObject(m)
			return o
		}
	}
	return object{}
}

// loaderWatch puts the internal breakpoint on _dl_debug_state in the
// objects being planned that define it (the loader).
func (pl *planner) loaderWatch() {
	pl.internalWatch(func(oi *objInfo) []internalBP {
		ds := oi.debugState
		return []internalBP{{ds.off, debugStateSym, func(bp *breakpoint) {
			bp.loader = true
			if ds.size > 0 && len(bp.sites) == 0 {
				// To its alignment: a lone ret's pad covers the padding
				// after it (ssol.PlanPad).
				end := (ds.value + ds.size + 15) &^ 15
				bp.padFn = &probe.Site{Object: bp.obj.path, Func: ds.name, FuncAddr: ds.value, FuncSize: end - ds.value, Addr: ds.value}
			}
		}}}
	})
}

// internalBP is a breakpoint of the engine's own at a file offset of an
// object (0: the object has no such function), marked by mark.
type internalBP struct {
	off  uint64
	name string
	mark func(*breakpoint)
}

// internalWatch puts the internal breakpoints that bps lists for each
// object being planned. One another tracer holds already is passed over:
// the trace goes on, blind to what it would have told (later dlopens,
// the program's signal calls).
func (pl *planner) internalWatch(bps func(*objInfo) []internalBP) {
	for _, m := range pl.ms {
		o, ok := execObject(m)
		if !ok || !pl.planning(o) {
			continue
		}
		oi := pl.tr.ld.objInfo(m.Path)
		if oi == nil {
			continue
		}
		for _, ib := range bps(oi) {
			if ib.off == 0 || !m.Holds(ib.off) {
				continue
			}
			addr := m.AddrOf(ib.off)
			if bp := pl.p.bps[addr]; bp != nil {
				ib.mark(bp) // a probe's, in already
				continue
			}
			if pl.p.padAt(addr) != nil {
				continue // a probe's pad: the program's calls do not stop there
			}
			if bp, err := pl.bp(&probe.Site{Func: ib.name, FuncAddr: addr, Addr: addr}, addr); err == nil {
				ib.mark(bp)
			}
		}
	}
}

// planning says whether o is among the objects this plan covers.
func (pl *planner) planning(o object) bool { return pl.only == nil || pl.only[o] }

// rescan runs at the loader's breakpoint, th stopped there with its
// registers set to run on: new objects get their probes, gone objects
// lose their breakpoints.
func (ld *loader) rescan(th *thread) {
	tr := ld.tr
	p := th.p
	if p.holding || p.shared != nil || tr.wake.cancelled.Load() {
		return
	}
	ms, err := readMaps(p.pid)
	if err != nil {
		return
	}
	tr.stacks.unwinder.Maps.Forget(p.pid)
	now := execObjects(ms)
	fresh := map[object]bool{}
	for o := range now {
		if !p.seen[o] {
			fresh[o] = true
		}
	}
	gone := false
	for o := range p.seen {
		if !now[o] {
			gone = true
		}
	}
	if len(fresh) == 0 && !gone {
		return // the call before a change, or a dlopen of a loaded object
	}
	tr.quiesce(p)
	defer tr.resumeAll(p)
	for addr, bp := range p.bps {
		if objectAt(ms, addr) != bp.obj {
			delete(p.bps, addr)
			delete(p.slots, bp.slot)
		}
	}
	p.seen = now
	semsGone(p, now)
	if len(fresh) == 0 {
		return
	}
	sites := tr.sites
	if tr.target.Resolve != nil {
		if more, err := tr.target.Resolve(p.pid); err == nil {
			sites = more
		}
	}
	if err := tr.bp.installIn(p, th, sites, fresh); err != nil {
		tr.fail(err)
	}
}

// ownTrap takes the temporary int3 of armLoaded, and the int3 of the
// loader's hook in its trap pad (padtrap.go): the thread goes on in the
// pad.
func (ld *loader) ownTrap(s *stop) bool {
	p := s.th.p
	if s.kernelTrap() && p.pads.trapAt(s.regs.Rip) != nil {
		ld.tr.sigs.trapTaken(s.th)
		ld.rescan(s.th)
		return true
	}
	if !s.kernelTrap() || !p.armed || s.regs.Rip-1 != p.armAt {
		return false
	}
	ld.tr.sigs.trapTaken(s.th)
	ld.atLoaded(s.th, &s.regs)
	return true
}
