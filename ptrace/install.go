//go:build linux && amd64

package ptrace

import (
	"fmt"
	"sort"

	"golang.org/x/sys/unix"

	"github.com/utap/utap/internal/proc"
	"github.com/utap/utap/probe"
	"github.com/utap/utap/ssol"
	"github.com/utap/utap/uretprobe"
)

// atLoaded runs at the temporary breakpoint of armLoaded: once the loader
// has mapped and relocated the libraries, the probes go in.
func (ld *loader) atLoaded(th *thread, regs *unix.PtraceRegs) {
	tr := ld.tr
	p := th.p
	if p.armRV != nil {
		// The loader's calls before its link map is complete are passed.
		passed, err := p.armRV.PassIncomplete(p.mem.ReadAt, regs)
		if err != nil {
			tr.fail(err)
			return
		}
		if passed {
			tr.setRegs(th, regs)
			return
		}
	}
	if err := p.mem.WriteAt([]byte{p.armB}, p.armAt); err != nil {
		tr.fail(err)
		return
	}
	p.armed = false
	regs.Rip = p.armAt
	tr.setRegs(th, regs)
	sites := tr.sites
	if tr.target.Resolve != nil {
		var err error
		if sites, err = tr.target.Resolve(p.pid); err != nil {
			tr.fail(err)
			return
		}
	}
	tr.quiesce(p)
	if err := tr.bp.install(p, th, sites); err != nil {
		tr.fail(err)
		return // stopped: the command is killed before any of its code runs
	}
	tr.resumeAll(p)
}

// readCode reads up to len(p) bytes at addr, fewer at the end of a mapping.
func readCode(m *proc.Memory, p []byte, addr uint64) (int, error) {
	for n := len(p); n > 0; n-- {
		if err := m.ReadByMem(p[:n], addr); err == nil {
			return n, nil
		} else if n == 1 {
			return 0, err
		}
	}
	return 0, nil
}

func siteName(s *probe.Site) string {
	if s.Func != "" {
		return fmt.Sprintf("%s+%#x", s.Func, s.Addr-s.FuncAddr)
	}
	return fmt.Sprintf("%#x", s.Addr)
}

// install puts sites' breakpoints into p, whose threads are all stopped;
// th is one of them, to run the injected mmap.
func (bk *breakpoints) install(p *process, th *thread, sites []probe.Site) error {
	return bk.installIn(p, th, sites, nil)
}

// installIn installs the sites in the objects only holds (nil: in every
// object mapped).
func (bk *breakpoints) installIn(p *process, th *thread, sites []probe.Site, only map[object]bool) error {
	tr := bk.tr
	pl, err := bk.plan(p, sites, only)
	if err != nil {
		return err
	}
	if p.seen == nil {
		p.seen = map[object]bool{}
	}
	for o := range pl.seen {
		p.seen[o] = true
	}
	if err := tr.pads.place(p, th, pl); err != nil {
		return err
	}
	if p.pads != nil && p.pads.syncAtWrites() {
		tr.pads.say(fmt.Sprintf("process %d: the trace's lines wait for its writes to the terminal (sync points), not each call", p.pid))
	}
	// The trampoline and the signal hooks serve breakpoints' hijacks
	// only: a return pad's needs neither (a pad that could not be
	// written is a breakpoint again by now).
	pl.hijacks = false
	for _, bp := range pl.bps {
		pl.hijacks = pl.hijacks || bp.hijack != nil
	}
	tr.pads.placeSys(p, th, only)
	tr.sigs.sigHooksKept(p, pl)
	bps := pl.bps
	if len(bps) == 0 {
		return nil
	}
	if err := bk.placeSlots(p, th, bps, pl.hijacks); err != nil {
		return err
	}
	if p.tramp == 0 && len(p.areas) > 0 {
		p.tramp = p.areas[0].start
	}
	for _, g := range pl.groups {
		g.id = len(p.groups)
		p.groups = append(p.groups, g)
		if g.method == uretprobe.RetProbes && p.calls == nil {
			p.calls = newCallPairs(retLimit)
		}
	}
	for _, bp := range bps {
		if bp.slotN > 0 {
			code, err := bp.in.Slot(bp.slot)
			if err != nil {
				return fmt.Errorf("%s: slot for %s: %w", bp.name, bp.text, err)
			}
			if err := p.mem.WriteAt(code, bp.slot); err != nil {
				return err
			}
			// A rip-relative Boost whose slot lies out of disp32 range of
			// its operand becomes a Step: the slot decides.
			bp.action = bp.in.ActionFor(bp.slot)
			bp.slotN = len(code)
			p.slots[bp.slot] = bp
		}
	}
	for _, bp := range bps {
		if err := p.mem.WriteAt([]byte{0xcc}, bp.addr); err != nil {
			return err
		}
		p.bps[bp.addr] = bp
		delete(p.removed, bp.addr)
	}
	return tr.ld.semsUp(p, pl.sems)
}

// placeSlots maps SSOL areas and gives each Boost and Step breakpoint its
// slot. Slot 0 of each area is the return trampoline's int3, then int3s
// and the touch code (touch.go).
func (bk *breakpoints) placeSlots(p *process, th *thread, bps map[uint64]*breakpoint, tramp bool) error {
	tr := bk.tr
	var need []*breakpoint
	touch := false
	for _, bp := range bps {
		if bp.action == ssol.Boost || bp.action == ssol.Step {
			need = append(need, bp)
		}
		touch = touch || bp.in.Accesses()
	}
	if len(need) == 0 && (!(tramp || touch) || p.tramp != 0) {
		return nil
	}
	if len(need) == 0 {
		// Return probes need the trampoline, emulated memory accesses
		// the touch code, even with no slot to place.
		for _, bp := range bps {
			if bp.hijack != nil || bp.in.Accesses() {
				start, err := tr.mapArea(p, th, bp.addr, bp.addr, 4096)
				if err != nil {
					return err
				}
				p.areas = append(p.areas, area{start: start, size: 4096})
				return p.mem.WriteAt(slotZero(), start)
			}
		}
	}
	for _, group := range byRegion(need, func(bp *breakpoint) uint64 { return bp.addr }) {
		size := pageRound(uint64(len(group)+1) * ssol.SlotSize)
		start, err := tr.mapArea(p, th, group[0].addr, group[len(group)-1].addr, size)
		if err != nil {
			return err
		}
		p.areas = append(p.areas, area{start: start, size: size})
		if err := p.mem.WriteAt(slotZero(), start); err != nil {
			return err
		}
		for i, bp := range group {
			bp.slot = start + uint64(i+1)*ssol.SlotSize
			bp.slotN = 1 // placeholder until the slot is written
		}
	}
	return nil
}

func pageRound(n uint64) uint64 { return (n + 4095) &^ 4095 }

// byRegion sorts items by address and groups them by 1 GiB from the
// first of each group: an area mapped within ±2 GiB of a group
// (mapArea) keeps every rel32 jump between them and rewritten
// RIP-relative displacements in reach.
func byRegion[T any](items []T, addr func(T) uint64) [][]T {
	sort.Slice(items, func(i, j int) bool { return addr(items[i]) < addr(items[j]) })
	var groups [][]T
	for len(items) > 0 {
		lo, n := addr(items[0]), 0
		for n < len(items) && addr(items[n])-lo < 1<<30 {
			n++
		}
		groups = append(groups, items[:n])
		items = items[n:]
	}
	return groups
}

// mapArea maps an r-x area of size bytes in a gap of p's address space
// within ±2 GiB of [lo, hi], or anywhere if there is none.
func (tr *tracer) mapArea(p *process, th *thread, lo, hi, size uint64) (uint64, error) {
	ms, err := readMaps(p.pid)
	if err != nil {
		return 0, err
	}
	const reach = 1<<31 - 1<<20
	cands := gaps(ms, size)
	sort.Slice(cands, func(i, j int) bool { return dist(cands[i], lo) < dist(cands[j], lo) })
	for _, hint := range cands {
		if !within(hint, lo, hi, size, reach) {
			continue
		}
		addr, err := tr.inject(th, unix.SYS_MMAP, hint, size, unix.PROT_READ|unix.PROT_EXEC,
			unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_FIXED_NOREPLACE, ^uint64(0), 0)
		if err == nil && addr == hint {
			return addr, nil
		}
		if err == proc.ErrGone {
			return 0, err
		}
	}
	addr, err := tr.inject(th, unix.SYS_MMAP, 0, size, unix.PROT_READ|unix.PROT_EXEC,
		unix.MAP_PRIVATE|unix.MAP_ANONYMOUS, ^uint64(0), 0)
	if err != nil {
		return 0, fmt.Errorf("pid %d: mapping the SSOL area: %w", p.pid, err)
	}
	return addr, nil
}

func dist(x, y uint64) uint64 {
	if x > y {
		return x - y
	}
	return y - x
}

func within(a, lo, hi, size, reach uint64) bool {
	return dist(a, lo) < reach && dist(a+size, hi) < reach && dist(a, hi) < reach && dist(a+size, lo) < reach
}

// gaps lists candidate addresses of size free bytes: just below and just
// above every mapping, nearest the code first is up to the caller.
func gaps(ms []mapping, size uint64) []uint64 {
	var out []uint64
	for i, m := range ms {
		if i > 0 && ms[i-1].End+size <= m.Start && m.Start-size >= 1<<16 {
			out = append(out, m.Start-size)
		}
		if i+1 < len(ms) && m.End+size <= ms[i+1].Start {
			out = append(out, m.End)
		}
	}
	return out
}
