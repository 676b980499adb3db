//go:build linux && amd64

package ptrace

import (
	"fmt"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/utap/utap/internal/pad"
	"github.com/utap/utap/ssol"
)

// Dispatch and watch pads (internal/pad/dispatch.go), in trap mode
// (padsystrap.go): a `syscall` of a number not set before it makes the
// calls not probed in-process and sends each probed one to a pad of its
// own, or to its trap; a watched call's site, not probed, makes in-process
// every call but those that may make code or install a seccomp filter.

// dispatchNrs are the numbers a dispatch pad sends on, to their own pads
// or its trap: those probed and those watched, sorted; false when every
// call is probed, or too many (the sites then keep only their trap).
func (sy *sysTrace) dispatchNrs() ([]int, bool) { return sy.dispatch, sy.dispatch != nil }

// dispatchable computes dispatchNrs, once the probed calls are known.
func (sy *sysTrace) dispatchable() []int {
	if sy.all {
		return nil
	}
	var nrs []int
	for nr := range sy.byNr {
		nrs = append(nrs, nr)
	}
	for nr := range trapWatched {
		if len(sy.byNr[nr]) == 0 {
			nrs = append(nrs, nr)
		}
	}
	if len(nrs) > pad.MaxDispatch {
		return nil
	}
	slices.Sort(nrs)
	return nrs
}

// dispatchPads writes, for the dispatch pad of site d, a system call pad
// of each probed number that can have one (no displaced instructions:
// the dispatch pad ran them; back after d's `syscall`), and returns
// where each is. They take at most half the gate; the other numbers go to
// the trap.
func (sc sysScan) dispatchPads(d *sysSite, ring uint64, n int) map[int]uint64 {
	p, sp, sy := sc.p, sc.sp, sc.pd.tr.sys
	to := map[int]uint64{}
	nrs, _ := sy.dispatchNrs()
	for _, nr := range nrs {
		if sp.next > sy.gate.size/2 {
			break
		}
		// Not probed, watched, keeping its stops: padCaps says why.
		site, caps, why := sy.padCaps(nr)
		if why != "" {
			continue
		}
		s := &sysSite{first: d.sc, sc: d.sc, nr: nr, padAt: sy.gate.addr + sp.next, disp: &ssol.Displaced{Addr: d.sc}}
		code, parts, id, err := sc.recordCode(s, site, caps, func(uint64) ([]byte, error) { return nil, nil }, ring, n)
		if err != nil || sp.next+uint64(len(code)) > sy.gate.size || p.mem.WriteAt(code, s.padAt) != nil {
			continue
		}
		s.at(code, parts)
		sp.sites[s.pad] = s
		sp.take(code)
		sc.recordSite(s, id, parts)
		to[nr] = s.padAt
	}
	return to
}

// planDispatch plans the dispatch pad of the file's `syscall` fsc in
// the image at bias, nil when it takes none: every call probed, or its
// neighbours cannot move.
func (sc sysScan) planDispatch(fsc *fileSyscall, bias uint64) *sysSite {
	if _, ok := sc.pd.tr.sys.dispatchNrs(); !ok {
		return nil
	}
	if fsc.movable() != "" {
		return nil
	}
	from, v := fsc.from, fsc.v
	rd, why := sc.planAt(from+bias, v+bias, true)
	if why != "" {
		return nil
	}
	return sysSiteAt(rd, v+bias, -1, true)
}

// watchArgs are the tests of a watch pad of nr (pad.BuildWatch): when
// the call may make code or install a seccomp filter; ok false for a
// call that takes none (seccomp itself, rare: always its trap).
func watchArgs(nr int) (bits []pad.WatchBit, eq *int32, ok bool) {
	switch nr {
	case unix.SYS_MMAP:
		return []pad.WatchBit{{Reg: 2, Off: pad.WatchExec}, {Reg: 10, Off: pad.WatchAnon}}, nil, true
	case unix.SYS_MPROTECT, unix.SYS_PKEY_MPROTECT:
		return []pad.WatchBit{{Reg: 2, Off: pad.WatchExec}}, nil, true
	case unix.SYS_PRCTL:
		v := int32(unix.PR_SET_SECCOMP)
		return nil, &v, true
	}
	return nil, nil, false
}

// planWatch plans the watch pad of the `syscall` at v (link-time, from
// the landing `from`) of the watched call nr, not probed; nil when it
// takes none.
func (sc sysScan) planWatch(from, v, bias uint64, nr int) *sysSite {
	if _, _, ok := watchArgs(nr); !ok {
		return nil
	}
	rd, why := sc.planAt(from+bias, v+bias, false)
	if why != "" {
		return nil
	}
	return sysSiteAt(rd, v+bias, nr, true)
}

// buildWatch assembles t's watch pad, its tables written in the gate
// first if they are not yet.
func (sc sysScan) buildWatch(t sysPlanned) ([]byte, pad.SysParts, uint32, error) {
	sy, sp, s := sc.pd.tr.sys, sc.sp, t.s
	if sp.watches == 0 {
		tab := pad.WatchTable()
		at := sy.gate.addr + sp.next
		if sp.next+uint64(len(tab)) > sy.gate.size {
			return nil, pad.SysParts{}, 0, fmt.Errorf("the gate is full")
		}
		if err := sc.p.mem.WriteAt(tab, at); err != nil {
			return nil, pad.SysParts{}, 0, err
		}
		sp.watches, sp.next = at, sp.next+uint64(len(tab))
		s.padAt = sy.gate.addr + sp.next
	}
	rel, err := t.d.Relocated(s.padAt)
	if err != nil {
		return nil, pad.SysParts{}, 0, err
	}
	bits, eq, _ := watchArgs(s.nr)
	code, wp, err := pad.BuildWatch(rel, bits, eq, sp.watches, s.sc)
	return code, pad.SysParts{TSC: wp.Compare, Syscall: wp.Syscall}, 0, err
}
