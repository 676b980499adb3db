//go:build linux && amd64

package ptrace

import (
	"fmt"

	"github.com/utap/utap/internal/pad"
	"github.com/utap/utap/ptrace/pads"
)

// The loader's hook in a pad. Its int3 (loader.go) is the one breakpoint
// of utap's a process whose probes are all pads still has, and an int3
// outlives a tracer killed by SIGKILL: the process's next dlopen or
// dlclose would die of it. As a trap pad (pad.Spec.Trap) it stops the
// thread only while the tracer lives, which the kernel tells the pad the
// moment the tracer dies (padalive.go); the stop then takes the same
// path as the int3's (rescan), the thread resuming in the pad after its
// int3. A hook the pad cannot take (no alignment after a one-byte ret,
// a thread about to resume in the bytes its jump takes) keeps its int3.

// trapPads moves the loader's breakpoints at addrs out of pl.bps, into
// trap pads where their instructions allow it.
func (pl *planner) trapPads(addrs []uint64, busy func(uint64) bool, stacks map[int][]uint64, taken map[uint64]bool) {
	for _, a := range addrs {
		bp := pl.bps[a]
		d, why := pl.displace(bp, bp.padFn, busy, stacks)
		if why != "" {
			pl.tr.pads.say(fmt.Sprintf("%s at %#x: breakpoint: %s", bp.name, a, why))
			continue
		}
		pl.pads = append(pl.pads, &padSite{addr: a, disp: d, obj: bp.obj, name: bp.name, bp: bp, trap: true})
		takeSpan(taken, d)
		delete(pl.bps, a)
	}
}

// ownLoaderTrap says whether bp is the loader's hook alone, which a trap
// pad may take.
func ownLoaderTrap(bp *breakpoint) bool {
	return bp.loader && bp.padFn != nil && len(bp.sites) == 0 && bp.hijack == nil && !bp.unwinder && bp.sigHook == 0
}

// trapSpec is the pad spec of ps, a trap pad.
func trapSpec(p *process, ps *padSite, id uint32) pad.Spec {
	return pad.Spec{ID: id, Addr: ps.addr, Trap: true, Ring: p.pads.ring.Addr, Records: p.pads.ring.N, Displaced: ps.disp.Code}
}

// trapAt is the trap pad whose int3 was just hit by a thread at rip.
func (pp *padProc) trapAt(rip uint64) *padSite {
	if ps := pp.padOf(rip - 1); ps != nil && ps.trap && rip-1 == ps.pad+uint64(ps.lay.Trap) {
		return ps
	}
	return nil
}

// trapAhead says whether a thread at rip in ps's pad has its int3
// still ahead: a thread run or stepped out of the pad crosses it
// (escape, fault) and owes the loader its rescan.
func trapAhead(ps *padSite, rip uint64) bool {
	return ps != nil && ps.trap && rip <= ps.pad+uint64(ps.lay.Trap)
}

// noRecordSite is the drainer's side of a pad that writes no record (a
// restore pad, a sync point, a trap pad): a name for its id.
func noRecordSite(ps *padSite) *pads.Site {
	return &pads.Site{Probe: ps.name, Func: ps.name, Index: -1}
}
