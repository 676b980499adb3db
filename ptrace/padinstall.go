//go:build linux && amd64

package ptrace

import (
	"fmt"
	"maps"
	"os"

	"golang.org/x/sys/unix"

	"github.com/utap/utap/internal/pad"
	"github.com/utap/utap/internal/proc"
	"github.com/utap/utap/ptrace/pads"
)

// place writes the pads planned in pl (and their ring, the first
// time) into p, whose threads are all stopped, then their jmps. A pad that
// cannot be built where its area landed gives its breakpoint back to
// pl.bps, which install then places as usual.
func (pd *padEngine) place(p *process, th *thread, pl *planned) error {
	tr := pd.tr
	if len(pl.pads) == 0 {
		return nil
	}
	if p.pads == nil {
		p.pads = &padProc{sites: map[uint64]*padSite{}, fs: pads.Owners{}}
	}
	back := func(ps *padSite, why string) {
		if ps.syncPoint {
			pd.say(fmt.Sprintf("%s at %#x: no sync point (the pads wait after each record): %s", ps.name, ps.addr, why))
			return
		}
		pd.say(fmt.Sprintf("%s at %#x: breakpoint: %s", ps.name, ps.addr, why))
		pl.bps[ps.addr] = ps.bp
	}
	if p.pads.ring == nil {
		r, err := pd.newRing(p, th, 0)
		if err != nil {
			for _, ps := range pl.pads {
				back(ps, err.Error())
			}
			return nil
		}
		p.pads.ring = r
		pd.fsAll(p)
	}
	pd.rseqOn(p, th)
	if err := pd.shadowFor(p, th, pl.pads); err != nil {
		kept := pl.pads[:0]
		for _, ps := range pl.pads {
			if ps.bp.hijack != nil {
				back(ps, err.Error())
			} else {
				kept = append(kept, ps)
			}
		}
		pl.pads = kept
	}
	filtered := seccompFiltered(p.pid) // read once: /proc/PID/status for each pad was a tenth of placing libc's
	for _, group := range byRegion(pl.pads, func(ps *padSite) uint64 { return ps.addr }) {
		var size uint64
		for _, ps := range group {
			size += padStride(ps)
		}
		size = pageRound(size)
		start, err := tr.mapArea(p, th, group[0].addr, group[len(group)-1].addr, size)
		if err != nil {
			return err
		}
		p.pads.areas = append(p.pads.areas, area{start: start, size: size})
		at := start
		for _, ps := range group {
			stride := padStride(ps) // before write clears ps.bp
			if err := pd.write(p, ps, at, filtered); err != nil {
				back(ps, err.Error())
			}
			at += stride
		}
	}
	return nil
}

// write builds ps's pad at `at`, writes it, then the jmp to it; filtered:
// p runs a seccomp filter of its own (the pad may not read memory).
func (pd *padEngine) write(p *process, ps *padSite, at uint64, filtered bool) error {
	tr := pd.tr
	jmp, err := ps.disp.Jump(at)
	if err != nil {
		return err
	}
	sp := ps.sp
	id := pd.d.SiteIDs(padKeyOf(ps), func() []*pads.Site { return recordSites(ps) })
	var spec pad.Spec
	if ps.restore {
		rs := pd.restoreSpec(p, ps, id)
		if rs == nil {
			return fmt.Errorf("no return pads' shadow stacks to restore")
		}
		spec = *rs
	} else if ps.syncPoint {
		spec = syncSpec(p, ps, id)
	} else if ps.trap {
		spec = trapSpec(p, ps, id)
	} else {
		spec = pad.Spec{
			ID: id, Addr: ps.addr, ABI: sp.site.ABI, Cond: sp.cond,
			Ring: p.pads.ring.Addr, Records: p.pads.ring.N, Displaced: ps.disp.Code, Count: pd.d.Tally(), Sync: pd.sync,
			NoReads: filtered, HijackOnly: ps.hijackOnly,
		}
		lay, _ := sp.layout() // wanted checked it
		lay.spec(&spec)
		if !ps.hijackOnly {
			pd.aggSpec(p, ps, &spec)
		}
	}
	size := padSize(ps)
	ret, retFixups, err := pd.returnPad(p, ps, &spec, at+size)
	if err != nil {
		return err
	}
	code, lay, err := pad.Build(spec, at)
	if err != nil {
		return err
	}
	if ret != nil {
		if err := p.mem.WriteAt(ret, at+size); err != nil {
			return err
		}
	}
	from, n := ps.disp.Span()
	orig := make([]byte, n)
	if err := p.mem.ReadByMem(orig, from); err != nil {
		return err
	}
	if err := p.mem.WriteAt(code, at); err != nil {
		return err
	}
	// The jmp's five bytes, then int3s up to Len: only the pad jumps back,
	// to addr+Len, so nothing runs them.
	for len(jmp) < len(orig) {
		jmp = append(jmp, 0xcc)
	}
	if err := p.mem.WriteAt(jmp, from); err != nil {
		return err
	}
	ps.orig, ps.jmp, ps.pad, ps.id, ps.bp, ps.lay, ps.size = orig, jmp, at, id, nil, lay, size
	p.pads.addFixups(at, lay.Fixups)
	p.pads.addFixups(at+size, retFixups)
	if ps.ret != nil {
		pd.say(fmt.Sprintf("%s at %#x: its return in-process, return pad at %#x", ps.name, ps.addr, ps.retPad))
	}
	p.pads.sites[ps.addr] = ps
	if !ps.trap {
		tr.stats.pads++ // the probes' (the loader's hook is utap's)
	}
	what := "in-process pad"
	switch {
	case ps.restore:
		what = "an unwinder's restore pad (puts the return pads' addresses back)"
	case ps.syncPoint:
		what = "a sync point (its writes to fd 0-2 wait for the trace's lines)"
	case ps.trap:
		what = "a trap pad (a dlopen stops there only while utap lives)"
	}
	hop := ""
	if ps.disp.Hop != 0 {
		hop = fmt.Sprintf("; a jmp rel8 to its jump in the padding at %#x", ps.disp.Hop)
	}
	pd.say(fmt.Sprintf("%s at %#x: %s at %#x (%d bytes displaced%s)", ps.name, ps.addr, what, at, ps.disp.Len, hop))
	return nil
}

// ringRecords is a ring's records (tests make it small, to fill it).
var ringRecords = pad.DefaultRecords

// newRing makes a ring for p: a memfd created by an injected call, mapped
// shared in p (at fixed, when not 0: a fork child's replacement) and in
// the tracer through /proc/PID/fd, the descriptor then closed in p.
func (pd *padEngine) newRing(p *process, th *thread, fixed uint64) (*pads.Ring, error) {
	tr := pd.tr
	n := ringRecords
	// After the strings: a counting trace's tally blocks, or the
	// aggregation tables (a counting trace has none: padagg.go).
	size := uint64(pad.Size(n)) + pd.aggBytes()
	if pd.d.Tally() {
		size = uint64(pad.SizeTally(n))
	}
	scratch, err := tr.sigs.scratchPage(p, th)
	if err != nil {
		return nil, err
	}
	if err := p.mem.WriteAt([]byte("utap-pads\x00"), scratch); err != nil {
		return nil, err
	}
	fd, err := tr.inject(th, unix.SYS_MEMFD_CREATE, scratch, unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("pid %d: memfd_create for the pads' ring: %w", p.pid, err)
	}
	defer tr.inject(th, unix.SYS_CLOSE, fd)
	if _, err := tr.inject(th, unix.SYS_FTRUNCATE, fd, size); err != nil {
		return nil, fmt.Errorf("pid %d: sizing the pads' ring: %w", p.pid, err)
	}
	flags := uint64(unix.MAP_SHARED)
	if fixed != 0 {
		flags |= unix.MAP_FIXED
	}
	addr, err := tr.inject(th, unix.SYS_MMAP, fixed, size, unix.PROT_READ|unix.PROT_WRITE, flags, fd, 0)
	if err != nil {
		return nil, fmt.Errorf("pid %d: mapping the pads' ring: %w", p.pid, err)
	}
	f, err := os.OpenFile(fmt.Sprintf("/proc/%d/fd/%d", p.pid, fd), os.O_RDWR, 0)
	if err != nil {
		tr.inject(th, unix.SYS_MUNMAP, addr, size)
		return nil, fmt.Errorf("pid %d: opening the pads' ring: %w", p.pid, err)
	}
	view, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	f.Close()
	if err != nil {
		tr.inject(th, unix.SYS_MUNMAP, addr, size)
		return nil, fmt.Errorf("pid %d: mapping the pads' ring here: %w", p.pid, err)
	}
	r, err := pd.d.Add(p.pid, addr, n, size, view, p.pads.fs)
	if err != nil {
		unix.Munmap(view)
		return nil, err
	}
	// Reads by loads, fixed up here, while this thread lives.
	if tid, err := aliveOn(); err == nil {
		aliveAdd(view, tid)
	}
	r.Quiet = !p.report
	return r, nil
}

// fsAll records the fs base of every stopped thread of p.
func (pd *padEngine) fsAll(p *process) {
	for _, th := range p.threads {
		pd.fsOf(th)
	}
}

// fsOf records th's fs base, once, at a stop: before it can run a pad.
func (pd *padEngine) fsOf(th *thread) {
	pp := th.p.pads
	if pp == nil || th.fsKnown || !th.stopped {
		return
	}
	var regs unix.PtraceRegs
	if proc.GetRegs(th.tid, &regs) != nil {
		return
	}
	th.fsKnown = true
	pd.d.SeeFS(pp.ring, pp.fs, regs.Fs_base, th.tid)
}

// forked is the pads of a fork child: the same sites, jumps and pad areas
// (fork copied them), and the parent's ring, shared by the copy of its
// mapping: own tells a followed child, which gets a ring of its own before
// it runs (beforeRun); one let go only has all of it taken out.
func (pp *padProc) forked(own bool) *padProc {
	if pp == nil {
		return nil
	}
	// The shadow area is private: fork copied it, the child's returns
	// find their addresses in its copy.
	np := &padProc{sites: map[uint64]*padSite{}, areas: append([]area(nil), pp.areas...), fs: pads.Owners{}, shadow: pp.shadow,
		fixups: maps.Clone(pp.fixups), sys: pp.sys.forked()}
	for a, ps := range pp.sites {
		np.sites[a] = ps
	}
	if pp.ring != nil {
		// Its copy of the mapping: no view of the tracer's.
		np.ring = pp.ring.Copy()
		np.newRing = own
	}
	return np
}

// forkOrder puts a followed fork child's parent's records up to the fork
// before the child's: the child's go to a ring of its own (beforeRun),
// read in no set order with its parent's, and the parent's calls before
// the fork came out after the child's (in 1 of 40 runs under load). The
// stop's marks do it: the records below them go out first, and a ring
// made since waits for them. With the stop's events queued, their
// release does it.
func (pd *padEngine) forkOrder(np *process) {
	if pd == nil || np.pads == nil || !np.pads.newRing || len(pd.tr.out.pending) > 0 {
		return
	}
	pd.d.Hold()
	pd.d.Release(pd.tr.clock.now(), nil)
}

// beforeRun readies a stopped thread of a process with pads: its fs
// base recorded, and a followed fork child's ring replaced by its own at
// the same address, before it runs a pad.
func (pd *padEngine) beforeRun(th *thread) {
	tr := pd.tr
	pp := th.p.pads
	if pp.newRing {
		pp.newRing = false
		old := pp.ring
		pp.ring = nil
		if r, err := pd.newRing(th.p, th, old.Addr); err != nil {
			tr.fail(fmt.Errorf("pid %d: a ring for the fork child's pads: %w", th.p.pid, err))
		} else {
			pp.ring = r
			pd.rseqOn(th.p, th)
			// Its sync points are its parent's copies. Not said: -v's
			// line would cut a line of the trace's in two.
			pp.syncAtWrites()
		}
	}
	pd.fsOf(th)
}
