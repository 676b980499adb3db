//go:build linux && amd64

package ptrace

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/utap/utap/internal/bytecode"
	"github.com/utap/utap/internal/pad"
	"github.com/utap/utap/probe"
)

// Sync points. On the terminal the command writes to, a trace's line
// must come before what the command prints after the call (Engine.Sync).
// Each pad could wait after its record until the tracer has written its
// line (a wake-up and a write(2) a record: 24–28 µs a call on a
// pseudo-terminal), but the command's output can overtake a line only
// where it writes: libc's write functions get pads of their own, sync
// points, that write no record and, for a write to fd 0, 1 or 2, wait
// until the tracer has passed every record before them
// (pad.Spec.SyncPoint). Once a process has them all, its ring's waits
// move there (pads.Ring.SyncAtWrites). A process without them keeps
// the wait after each record: one whose libc write functions cannot
// have a pad (a probe of the user's there, instructions that may not be
// moved), a program without libc (static, Go: its runtime writes with
// system calls of its own). A followed fork child's ring is new: its
// copies of the sync points take its waits as it gets it.

// syncWrites are the libc functions a program's terminal output goes
// through, each a sync point; the first two are needed for the waits to
// move (glibc's __write_nocancel serves few writes: a sync point where
// it exists).
var syncWrites = []string{"write", "writev", "__write_nocancel"}

const syncNeeded = 2

// syncCond is a sync point's condition: the call writes to fd 0, 1 or 2.
var syncCond = func() *bytecode.Program {
	s, err := probe.Parse("write if (u32)arg1 < 3")
	if err != nil {
		panic(err)
	}
	c, err := bytecode.CompileCond(s.Cond)
	if err != nil {
		panic(err)
	}
	return c
}()

// isLibc says whether path is a C library (glibc's, musl's).
func isLibc(path string) bool {
	base := filepath.Base(path)
	return strings.HasPrefix(base, "libc.so") || strings.HasPrefix(base, "ld-musl")
}

// syncWatch plans the sync points of the objects being planned: a C
// library's write functions, where no probe is. A Go program gets none.
func (pl *planner) syncWatch() {
	pd := pl.tr.pads
	if pd == nil || pd.off || !pd.sync || !pl.p.report {
		return
	}
	for _, m := range pl.ms {
		if !strings.HasPrefix(m.Path, "/") {
			continue
		}
		if oi := pl.tr.ld.objInfo(m.Path); oi != nil && oi.goRuntime {
			return // its writes do not go through libc
		}
	}
	pl.internalWatch(func(oi *objInfo) []internalBP {
		var bps []internalBP
		for _, w := range oi.writes {
			bps = append(bps, internalBP{w.off, w.name, func(bp *breakpoint) {
				if len(bp.sites) == 0 && bp.hijack == nil && !bp.unwinder && !bp.loader && bp.sigHook == 0 {
					// Its own: not a probe's, nor another watch's.
					bp.syncSite = &probe.Site{Object: bp.obj.path, Func: w.name, FuncAddr: w.value, FuncSize: w.size, Addr: w.value}
				}
			}})
		}
		return bps
	})
}

// syncPads moves the sync points planned at addrs out of pl.bps, into
// pads where their instructions allow it: never a breakpoint.
func (pl *planner) syncPads(addrs []uint64, busy func(uint64) bool, stacks map[int][]uint64, taken map[uint64]bool) {
	for _, a := range addrs {
		bp := pl.bps[a]
		delete(pl.bps, a)
		d, why := pl.displace(bp, bp.syncSite, busy, stacks)
		if why != "" {
			pl.tr.pads.say(fmt.Sprintf("%s at %#x: no sync point (the pads wait after each record): %s", bp.name, a, why))
			continue
		}
		sp := &siteProg{site: bp.syncSite, cond: syncCond}
		pl.pads = append(pl.pads, &padSite{addr: a, disp: d, sp: sp, obj: bp.obj, name: bp.name, bp: bp, syncPoint: true})
		takeSpan(taken, d)
	}
}

// syncSpec is the pad spec of ps, a sync point.
func syncSpec(p *process, ps *padSite, id uint32) pad.Spec {
	return pad.Spec{ID: id, Addr: ps.addr, ABI: probe.ABISysV, Cond: syncCond, SyncPoint: true,
		Ring: p.pads.ring.Addr, Records: p.pads.ring.N, Displaced: ps.disp.Code}
}

// syncAtWrites moves the process's waits to its sync points once it has
// them all; true when it did now.
func (pp *padProc) syncAtWrites() bool {
	if pp.ring == nil || pp.syncing {
		return false
	}
	have := map[string]bool{}
	for _, ps := range pp.sites {
		if ps.syncPoint {
			have[ps.sp.site.Func] = true
		}
	}
	for _, name := range syncWrites[:syncNeeded] {
		if !have[name] {
			return false
		}
	}
	pp.syncing = pp.ring.SyncAtWrites()
	return pp.syncing
}
