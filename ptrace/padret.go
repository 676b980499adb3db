//go:build linux && amd64

package ptrace

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/utap/utap/internal/pad"
	"github.com/utap/utap/internal/proc"
	"github.com/utap/utap/probe"
)

// Returns in pads (internal/pad/retpad.go): an entry pad of a function
// with a return probe hijacks its return address, keeping the real one
// on the thread's shadow stack in the process's shadow area, and the
// return pad after it (at pad+padSize) writes the return's record and
// jumps there. The tracer only reads the shadow stacks: to put the real
// addresses back before the pads go (detach, a fork child let go) and
// before an unwinder walks the stack (its breakpoint, retHit).

// shadowArea is a process's shadow stacks: a private anonymous mapping,
// which fork copies (a child's returns find their addresses in its own
// copy, with -f or not).
type shadowArea struct {
	addr  uint64 // 0: none yet
	size  uint64
	depth int
}

// padDepth is the entries of a thread's shadow stack (tests make it
// small, to overflow it).
var padDepth = pad.DefaultDepth

// retWanted says why bp's return probe cannot be in-process ("" if it
// can); bp hijacks (uretprobe.Hijack).
func (pd *padEngine) retWanted(bp *breakpoint) string {
	g := bp.hijack
	switch {
	case len(g.sites) != 1:
		return "several return probes of one function"
	}
	sp := g.sites[0]
	if sp.site.GoFunc || sp.site.ABI == probe.ABIGoRegs {
		return "a Go function"
	}
	if why := returnProgWhy(sp); why != "" {
		return why
	}
	ps := pad.Spec{Addr: bp.addr, ABI: sp.site.ABI, Cond: sp.cond, Records: pad.DefaultRecords, Kind: pad.KindReturn}
	lay, _ := sp.layout()
	lay.spec(&ps)
	err := pad.Check(ps)
	if err != nil {
		return "its return probe: " + err.Error()
	}
	return ""
}

// returnProgWhy is why return probe sp's program cannot be a return
// pad's ("" if it can), for the engine and for PadsAll alike.
func returnProgWhy(sp *siteProg) string {
	switch {
	case sp.ref:
		return "a return probe's expression only the reference evaluator takes"
	case sp.layoutWhy() != "":
		return "a return probe with " + sp.layoutWhy()
	case len(sp.entryArgs()) > pad.MaxShadowArgs:
		return fmt.Sprintf("a return probe reading more than %d of the entry's arguments", pad.MaxShadowArgs)
	}
	return ""
}

// padStride is the bytes ps takes in its area: its pad, and its return
// pad after it.
func padStride(ps *padSite) uint64 {
	if ps.bp != nil && ps.bp.hijack != nil {
		rs := ps.bp.hijack.sites[0]
		return padSize(ps) + uint64(pad.ReturnSizeOf(pad.Spec{Cond: rs.cond, Fetches: rs.fetches}))
	}
	return padSize(ps)
}

// padSize is the bytes ps's entry pad has (pad.SizeOf).
func padSize(ps *padSite) uint64 {
	if ps.sp == nil {
		return pad.MaxSize // a restore pad
	}
	return uint64(pad.SizeOf(pad.Spec{Cond: ps.sp.cond, Fetches: ps.sp.fetches}))
}

// shadowFor maps p's shadow area the first time a pad hijacks returns.
func (pd *padEngine) shadowFor(p *process, th *thread, list []*padSite) error {
	sh := &p.pads.shadow
	if sh.addr != 0 {
		return nil
	}
	want := false
	for _, ps := range list {
		want = want || ps.bp.hijack != nil
	}
	if !want {
		return nil
	}
	size := pageRound(uint64(pad.ShadowSize(padDepth)))
	addr, err := pd.tr.inject(th, unix.SYS_MMAP, 0, size, unix.PROT_READ|unix.PROT_WRITE,
		unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE, ^uint64(0), 0)
	if err != nil {
		return fmt.Errorf("pid %d: mapping the return pads' shadow stacks: %w", p.pid, err)
	}
	*sh = shadowArea{addr: addr, size: size, depth: padDepth}
	return nil
}

// returnPad builds ps's return pad to run at `at` when its breakpoint
// hijacks (nil if not), with its exception table, and makes spec, its
// entry pad's, hijack to it, keeping the arguments the return reads.
func (pd *padEngine) returnPad(p *process, ps *padSite, spec *pad.Spec, at uint64) ([]byte, []pad.Fixup, error) {
	if ps.bp == nil || ps.bp.hijack == nil {
		return nil, nil, nil
	}
	sh := p.pads.shadow
	if sh.addr == 0 {
		return nil, nil, fmt.Errorf("no shadow stacks for its return")
	}
	rs := retProg(ps)
	h := &pad.Hijack{Shadow: sh.addr, Depth: sh.depth, Return: at, Ring: spec.Ring, Args: rs.entryArgs()}
	spec.Open = callRecord(spec, rs)
	rspec := pad.Spec{
		ID: spec.ID + 1, Addr: ps.addr, ABI: rs.site.ABI, Cond: rs.cond,
		Ring: spec.Ring, Records: spec.Records, Count: spec.Count, Sync: spec.Sync, Amend: spec.Open, NoReads: spec.NoReads,
	}
	lay, _ := rs.layout()
	lay.spec(&rspec)
	code, fixups, err := pad.BuildReturn(rspec, h)
	if err != nil {
		return nil, nil, err
	}
	if limit := pad.ReturnSizeOf(rspec); len(code) > limit {
		return nil, nil, fmt.Errorf("a return pad of %d bytes, at most %d", len(code), limit)
	}
	spec.Hijack = h
	ps.ret, ps.retPad, ps.retSize = rs, at, uint64(pad.ReturnSizeOf(rspec))
	return code, fixups, nil
}

// callRecord says whether a call's entry and return may be one record
// (pad.Spec.Open, Amend): an entry pad writing a record of at most
// pad.MaxOpenValues values, a return probe with no condition and no
// value but the return value (its prototype's, typed: no read, no entry
// argument), and no wait for
// each line (Sync: the entry's line must come before the call runs).
// The drainer reads half the records, the return pad reserves none
// (docs/benchmarks.md).
func callRecord(entry *pad.Spec, ret *siteProg) bool {
	return !entry.Count && !entry.Sync && !entry.HijackOnly && !entry.Restore && entry.Agg == nil && entry.Sys == nil &&
		len(entry.Fetches) <= pad.MaxOpenValues && len(entry.Extra) == 0 && ret.cond == nil && len(ret.fetches) <= 1 && !readsMemory(ret) &&
		len(ret.entryArgs()) == 0
}

// restoreReturns puts back the real return address of every frame a
// return pad hijacked on th's stack (th stopped, outside any pad) and
// empties its shadow stack: the pads are going, or an unwinder is about
// to read the stack. Innermost first: a tail call's entry holds its
// caller's return pad, put back before the caller's own.
func (pd *padEngine) restoreReturns(th *thread, regs *unix.PtraceRegs) {
	p := th.p
	if p.pads == nil || p.pads.shadow.addr == 0 {
		return
	}
	sh := p.pads.shadow
	slot, frames, err := pad.ReadShadow(p.mem.ReadAt, sh.addr, sh.depth, regs.Fs_base)
	if err != nil || slot == 0 {
		return
	}
	var b [8]byte
	for i := len(frames) - 1; i >= 0; i-- {
		f := frames[i]
		if f.SP < regs.Rsp && f.SP+8 > regs.Rsp-redZone {
			continue // a leaf function's red zone: not a slot any more
		}
		if p.mem.ReadAt(b[:], f.SP) != nil || !p.pads.inPad(binary.LittleEndian.Uint64(b[:])) {
			continue
		}
		binary.LittleEndian.PutUint64(b[:], f.Orig)
		p.mem.WriteAt(b[:], f.SP)
	}
	binary.LittleEndian.PutUint64(b[:], 0)
	p.mem.WriteAt(b[:], slot+8)
}

// restoreAllReturns is restoreReturns for every stopped thread of p.
func (pd *padEngine) restoreAllReturns(p *process) {
	var regs unix.PtraceRegs
	for _, th := range p.threads {
		if th.stopped && !th.dead && proc.GetRegs(th.tid, &regs) == nil {
			pd.restoreReturns(th, &regs)
		}
	}
}

// shadowGone unmaps p's shadow area, unless keep (a frame may still
// return into a pad).
func (pd *padEngine) shadowGone(p *process, th *thread, keep bool) {
	sh := p.pads.shadow
	if sh.addr == 0 {
		return
	}
	if th != nil && !keep {
		pd.tr.inject(th, unix.SYS_MUNMAP, sh.addr, sh.size)
	}
	p.pads.shadow = shadowArea{}
}

// retMissedNotice says why n returns were not shown.
func retMissedNotice(n uint64) string {
	return fmt.Sprintf("%d returns not seen: their calls nested deeper than an in-process shadow stack holds "+
		"(%d calls a thread), or their thread found no room (--no-pads sees them)", n, padDepth)
}

// readsMemory says whether a probe's condition or fetches read the
// process's memory (a load or a string).
func readsMemory(sp *siteProg) bool {
	if sp.cond != nil && sp.cond.Reads() {
		return true
	}
	for _, f := range sp.fetches {
		if f.Reads() || f.StrAddr() != nil {
			return true
		}
	}
	return false
}
