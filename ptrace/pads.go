//go:build linux && amd64

package ptrace

import (
	"errors"
	"fmt"
	"sort"

	"github.com/utap/utap/elfsym"
	"github.com/utap/utap/internal/pad"
	"github.com/utap/utap/probe"
	"github.com/utap/utap/ptrace/pads"
	"github.com/utap/utap/ssol"
)

// In-process probes (internal/pad): where a site allows it, its int3
// becomes a jmp to a pad that evaluates the probe in the process and
// writes a record into a ring the tracer drains; the thread never stops.
// A site keeps its int3 when the pad could not be exact: a return probe,
// a stack (-k), a fetch or condition native code cannot do (two read
// strings compared, a sized buffer, pid/tid; memory reads it does),
// a Go function, more than pad.MaxValues values, or instructions the
// jmp may not displace (ssol.PlanPad says why).

// padSite is one site whose first bytes jump to its pad.
type padSite struct {
	addr uint64
	disp *ssol.Displaced
	orig []byte // the bytes the jmp overwrote
	jmp  []byte
	pad  uint64
	sp   *siteProg
	id   uint32
	obj  object
	name string
	bp   *breakpoint // the int3 it replaces, until the pad is in
	lay  pad.Layout
	size uint64 // the bytes of its pad (pad.SizeOf)
	// restore: an unwinder's restore pad (padunwind.go); sp is nil.
	restore bool
	// hijackOnly: the entry pad of a return probe alone: sp is the
	// return probe's, bare (entryProg); the pad records nothing.
	hijackOnly bool
	// ret: the return probe whose return pad follows the pad (padret.go).
	ret     *siteProg
	retPad  uint64
	retSize uint64 // the bytes reserved for the return pad
	// syncPoint: a libc write's sync point (padsync.go): sp is bare.
	syncPoint bool
	// trap: the loader's hook as a trap pad (padtrap.go); sp is nil.
	trap bool
}

// padHold is a process's pads.
type padHold struct {
	pads *padProc // nil until the first
	// vforkWin: a vfork child's records in its parent's ring (padvfork.go).
	vforkWin *pads.Window
}

// padThread is a thread's side of the pads.
type padThread struct {
	fsKnown bool // its fs base is in p.pads.fs (padinstall.go)
	// vforkWin: blocked in vfork, its child's records (padvfork.go).
	vforkWin *pads.Window
	// vforkTop: its shadow stack's top as the vfork found it, put back
	// at its vfork-done (padvfork.go).
	vforkTop *shadowTop
}

// padProc is one process's pads and ring.
type padProc struct {
	sites map[uint64]*padSite // by site address
	areas []area              // pad areas (the SSOL areas are p.areas)
	ring  *pads.Ring          // nil until the first pad goes in
	// fs maps a thread's fs base, the identity a record carries, to its
	// tid (pads.Owners); read at each thread's first stop.
	fs pads.Owners
	// newRing: a fork child followed, whose shared mapping of the parent's
	// ring must be replaced by its own before it runs (padsFork).
	newRing bool
	shadow  shadowArea // the threads' shadow stacks of return pads (padret.go)
	// fixups: the pads' exception table, a load's address → its fix-up
	// (readFixup); kept until the pad areas go.
	fixups map[uint64]uint64
	sys    *sysPads // system calls in-process (padsys.go)
	// syncing: its waits for the terminal are at its sync points
	// (padsync.go).
	syncing bool
}

// padEngine is the in-process pads' component: their placement, removal
// and the stops they cause; the rings' records are the drainer's
// (package pads).
type padEngine struct {
	tr  *tracer
	off bool // --no-pads, or the machine cannot (padsOK)
	d   *pads.Drainer
	// sync: the pads wait after each record for its line (Engine.Sync):
	// their code has the wait (pad.Spec.Sync).
	sync bool
	// verbose reports each site's placement (probe.Config.Verbose).
	verbose func(string)
	aggs    *padAggs // the aggregation tables' layout (padagg.go)
}

func newPadEngine(tr *tracer, off bool, verbose func(string), d *pads.Drainer) *padEngine {
	return &padEngine{tr: tr, off: off, verbose: verbose, d: d}
}

// padsOK says whether pads can run here: the pad reads its thread's
// identity with rdfsbase, which the kernel enables only on CPUs with
// FSGSBASE (AT_HWCAP2 bit 1, Linux 5.9+).
func padsOK() error {
	if !pad.FSGSBase() {
		return errors.New("this CPU or kernel does not let programs read their fs base (rdfsbase): every site keeps its breakpoint")
	}
	return nil
}

// wanted says why bp cannot have a pad ("" if it can, as far as its
// probes go: the instructions are ssol's to judge).
func (pd *padEngine) wanted(bp *breakpoint) string {
	tr := pd.tr
	switch {
	case len(bp.sites) == 0 && bp.hijack != nil && !bp.unwinder && !bp.loader && bp.sigHook == 0:
		// A return probe alone: a pad that only hijacks.
		if why := pd.retWanted(bp); why != "" {
			return why
		}
		if tr.target.StackDepth > 0 {
			return "a stack is asked for (-k)"
		}
		return ""
	case len(bp.sites) != 1:
		if len(bp.sites) == 0 {
			return "an internal breakpoint"
		}
		return "several probes at one address"
	case len(bp.enter) > 0 || len(bp.rets) > 0:
		return "a return probe by breakpoints on its RETs"
	case bp.hijack != nil && pd.retWanted(bp) != "":
		return pd.retWanted(bp)
	case bp.unwinder || bp.loader || bp.sigHook != 0:
		return "an internal breakpoint"
	case tr.target.StackDepth > 0:
		return "a stack is asked for (-k)"
	}
	sp := bp.sites[0]
	switch {
	case sp.ref:
		return "an expression only the reference evaluator takes"
	case sp.site.GoFunc || sp.site.ABI == probe.ABIGoRegs:
		return "a Go function"
	}
	if why := sp.layoutWhy(); why != "" {
		return why
	}
	lay, _ := sp.layout()
	spec := pad.Spec{Addr: bp.addr, ABI: sp.site.ABI, Cond: sp.cond, Records: pad.DefaultRecords}
	lay.spec(&spec)
	err := pad.Check(spec)
	if err != nil {
		return err.Error()
	}
	return ""
}

// padPlan moves the breakpoints that can have pads out of pl.bps into
// pl.pads. Every breakpoint is planned by now, so a pad never overwrites
// another's address.
func (pl *planner) padPlan() {
	tr, p := pl.tr, pl.p
	if tr.pads == nil || tr.pads.off || !p.report {
		return // no sync points either (syncWatch)
	}
	addrs := make([]uint64, 0, len(pl.bps))
	for a := range pl.bps {
		addrs = append(addrs, a)
	}
	sort.Slice(addrs, func(i, j int) bool { return addrs[i] < addrs[j] })
	taken := map[uint64]bool{} // bytes the jumps planned so far cover
	busy := func(a uint64) bool {
		if pl.bps[a] != nil || p.bps[a] != nil || (p.armed && a == p.armAt) {
			return true
		}
		return taken[a] || p.padAt(a) != nil
	}
	stacks := pl.threadWords()
	var unwinders, syncs, traps []uint64
	for _, a := range addrs {
		bp := pl.bps[a]
		if bp.unwinder && len(bp.sites) == 0 && bp.hijack == nil {
			unwinders = append(unwinders, a)
			continue
		}
		if ownLoaderTrap(bp) {
			traps = append(traps, a)
			continue
		}
		if bp.syncSite != nil { // marked only where nothing else was planned (syncWatch)
			syncs = append(syncs, a)
			continue
		}
		why := tr.pads.wanted(bp)
		sp := entryProg(bp)
		var d *ssol.Displaced
		if why == "" {
			d, why = pl.displace(bp, sp.site, busy, stacks)
		}
		if why != "" {
			if len(bp.sites) > 0 || bp.hijack != nil {
				tr.pads.say(fmt.Sprintf("%s at %#x: breakpoint: %s", bp.name, a, why))
			}
			continue
		}
		pl.pads = append(pl.pads, &padSite{addr: a, disp: d, sp: sp, obj: bp.obj, name: bp.name, bp: bp, hijackOnly: len(bp.sites) == 0})
		takeSpan(taken, d)
		delete(pl.bps, a)
	}
	pl.restorePads(unwinders, busy, stacks, taken)
	pl.syncPads(syncs, busy, stacks, taken)
	pl.trapPads(traps, busy, stacks, taken)
}

// displace asks ssol whether a jmp may replace the instructions at bp,
// and no thread of stacks (threadWords) resumes inside them (inFlight).
func (pl *planner) displace(bp *breakpoint, s *probe.Site, busy func(uint64) bool, stacks map[int][]uint64) (*ssol.Displaced, string) {
	if s.FuncSize == 0 || s.Addr < s.FuncAddr || s.Addr-s.FuncAddr >= s.FuncSize {
		return nil, "the function's bounds are unknown"
	}
	if s.Addr != s.FuncAddr {
		// Branches from elsewhere in the object (a .cold part, assembly
		// sharing tails) are not in the function's code: only its entry,
		// where nothing jumps to but its start, is taken.
		return nil, "a site inside a function (only entries get pads)"
	}
	start := bp.addr - (s.Addr - s.FuncAddr)
	fn := make([]byte, s.FuncSize)
	if err := pl.p.mem.ReadByMem(fn, start); err != nil {
		return nil, fmt.Sprintf("reading the function: %v", err)
	}
	pl.unpatch(fn, start)
	land, err := elfsym.ObjectLandings(s.Object)
	if err != nil {
		return nil, fmt.Sprintf("finding where the object's code jumps: %v", err)
	}
	bias := bp.addr - s.Addr // runtime minus link-time
	busy = landingsBusy(land, bias, busy)
	d, err := ssol.PlanEntry(fn, start, busy, hopBefore(land, s.FuncAddr, bias, func(from, n uint64) ([]byte, error) {
		pre := make([]byte, n)
		if err := pl.p.mem.ReadByMem(pre, from+bias); err != nil {
			return nil, err
		}
		pl.unpatch(pre, from+bias)
		return pre, nil
	}))
	if err != nil {
		return nil, err.Error()
	}
	if last := d.Insns[len(d.Insns)-1]; last.Bytes[0] == 0xe8 && pl.shadowStack() {
		// The pad pushes the call's return address, which the shadow
		// stack would not hold: the callee's ret would fault.
		return nil, "a call displaced under the CET shadow stack"
	}
	return d, pl.inFlight(bp.addr, d, stacks)
}

// landingsBusy adds to busy the addresses that code elsewhere in the
// object may jump to (elfsym.Landings): a jump must not cut them.
func landingsBusy(land *elfsym.Landings, bias uint64, busy func(uint64) bool) func(uint64) bool {
	return func(a uint64) bool {
		if land.Has(a - bias) {
			return true
		}
		return busy != nil && busy(a)
	}
}

// padAt returns the pad site whose jmp covers addr, nil if none.
func (p *process) padAt(addr uint64) *padSite {
	if p.pads == nil {
		return nil
	}
	for _, ps := range p.pads.sites {
		if from := ps.from(); addr >= from && addr < from+uint64(len(ps.orig)) {
			return ps
		}
	}
	return nil
}

// takeSpan marks the bytes d's jump takes: no other pad's may.
func takeSpan(taken map[uint64]bool, d *ssol.Displaced) {
	from, n := d.Span()
	for i := range uint64(n) {
		taken[from+i] = true
	}
}

// maxHopScan is how far before a function the landing may be from
// which the code up to it is decoded, for a hop (ssol.PlanHop).
const maxHopScan = 4096

// from is where ps's jump's bytes start: at its site, or at a hop's jump
// in the padding before it (ssol.Displaced.Span).
func (ps *padSite) from() uint64 {
	start, _ := ps.disp.Span()
	return start
}

// say reports one site's placement when verbose.
func (pd *padEngine) say(line string) {
	if pd != nil && pd.verbose != nil {
		pd.verbose(line)
	}
}

// sayf is say of a line formatted only when -v shows it: placing an
// image's 500 system call pads formatted a thousand lines for nothing.
func (pd *padEngine) sayf(format string, a ...any) {
	if pd != nil && pd.verbose != nil {
		pd.verbose(fmt.Sprintf(format, a...))
	}
}

// threadWords reads, for each stopped thread of the process, its rip and
// the words of its stack in use ([rsp, the end of its mapping), at most
// 64 KiB): a signal frame there holds the rip the handler returns to.
func (pl *planner) threadWords() map[int][]uint64 {
	out := map[int][]uint64{}
	for _, th := range pl.p.threads {
		if w, ok := threadWords(pl.p, th, pl.ms); ok {
			out[th.tid] = w
		}
	}
	return out
}

// inFlight refuses a pad whose jmp would cut an instruction a thread is
// about to resume in the middle of: its rip, or a signal frame's saved
// rip, inside (addr, addr+Len).
func (pl *planner) inFlight(addr uint64, d *ssol.Displaced, stacks map[int][]uint64) string {
	start, n := d.Span()
	end := start + uint64(n)
	for tid, words := range stacks {
		for _, w := range words {
			if w >= start && w < end && w != addr {
				return fmt.Sprintf("thread %d will resume at %#x, inside the bytes the jump would take", tid, w)
			}
		}
	}
	return ""
}

// ownSignal takes a signal of a pad: a fault of a jump another tracer
// changed (repair), a fault inside a pad (fault), an asynchronous
// signal landing in one (escape).
func (pd *padEngine) ownSignal(s *stop) bool {
	th, regs, si, sig := s.th, &s.regs, &s.si, s.sig
	if th.p.pads == nil {
		return false
	}
	sync := syncFault(sig, si)
	if (sync || s.kernelTrap()) && pd.repair(th, regs, sig, si) {
		return true // another tracer's uprobe hit our jmp: repaired
	}
	if sync && pd.readFixup(th, regs, sig) {
		return true // a read of bad memory: the pad goes on, the value unreadable
	}
	if sync && pd.fault(th, regs, si) {
		return true // ours: the thread goes on from the site's instructions
	}
	if !sync && th.step == nil && th.p.pads.inPad(regs.Rip) {
		pd.escape(th, regs, sig, si)
		return true
	}
	return false
}

// lostNotice says why pads lost events.
func lostNotice(lossy bool) string {
	if lossy {
		return "the lost events came faster than utap could write them: the in-process pads' ring was full, and " +
			"--lossy drops rather than make the calling threads wait (-c or --count-only count every call)"
	}
	return "the lost events found the in-process pads' ring full while utap did not read it for about a second: " +
		"the pads took the tracer for gone and dropped rather than wait"
}

// entryProg is what an entry pad at bp evaluates: its entry probe, or for
// a return probe alone the function's site with nothing to evaluate.
func entryProg(bp *breakpoint) *siteProg {
	if len(bp.sites) > 0 {
		return bp.sites[0]
	}
	if bp.hijack != nil && len(bp.hijack.sites) > 0 {
		return &siteProg{site: bp.hijack.sites[0].site}
	}
	return nil
}
