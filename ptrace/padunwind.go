//go:build linux && amd64

package ptrace

import (
	"fmt"

	"github.com/utap/utap/internal/pad"
	"github.com/utap/utap/ssol"
)

// Unwinders in-process. When every hijacked return of a process is a
// return pad's (no breakpoint hijacks), its unwinders' entries get
// restore pads instead of breakpoints (pad.Spec.Restore): the thread puts
// its real return addresses back itself. No trap of utap's is then left
// where the program runs (but the loader's), so libc's signal calls need
// no hooks (sigHooksKept) and the process lives on, C++ exceptions and
// all, after its tracer is killed.

// restorePads makes pads of the unwinders' breakpoints at unwinders
// when no breakpoint hijacks a return.
func (pl *planner) restorePads(unwinders []uint64, busy func(uint64) bool, stacks map[int][]uint64, taken map[uint64]bool) {
	if len(unwinders) == 0 || pl.bpHijacks() {
		return
	}
	tr := pl.tr
	for _, a := range unwinders {
		bp := pl.bps[a]
		why := ""
		switch {
		case tr.target.StackDepth > 0:
			why = "a stack is asked for (-k)"
		case bp.padFn == nil:
			why = "the unwinder's size is unknown"
		}
		var d *ssol.Displaced
		if why == "" {
			d, why = pl.displace(bp, bp.padFn, busy, stacks)
		}
		if why != "" {
			tr.pads.say(fmt.Sprintf("%s at %#x: breakpoint: %s", bp.name, a, why))
			continue
		}
		pl.pads = append(pl.pads, &padSite{addr: a, disp: d, obj: bp.obj, name: bp.name, bp: bp, restore: true})
		takeSpan(taken, d)
		delete(pl.bps, a)
	}
}

// bpHijacks says whether a breakpoint hijacks a return, planned or in.
func (pl *planner) bpHijacks() bool {
	for _, bp := range pl.bps {
		if bp.hijack != nil {
			return true
		}
	}
	for _, bp := range pl.p.bps {
		if bp.hijack != nil {
			return true
		}
	}
	return false
}

// restoreSpec is the pad spec of ps, an unwinder's restore pad; nil
// without shadow stacks to restore.
func (pd *padEngine) restoreSpec(p *process, ps *padSite, id uint32) *pad.Spec {
	sh := p.pads.shadow
	if sh.addr == 0 {
		return nil
	}
	r := p.pads.ring
	return &pad.Spec{
		ID: id, Addr: ps.addr, Ring: r.Addr, Records: r.N, Displaced: ps.disp.Code, Restore: true,
		Hijack: &pad.Hijack{Shadow: sh.addr, Depth: sh.depth, Ring: r.Addr},
	}
}
