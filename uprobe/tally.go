//go:build linux && amd64

package uprobe

import (
	"fmt"

	"github.com/cilium/ebpf/asm"
	"github.com/utap/utap/probe"
)

// Counting in place (probe.Target.Tally, utap -c / --count-only): a program that
// passes its condition adds to its site's counters and, for a return with
// a duration, to one bucket of its site's histogram; nothing goes through
// the ring buffer and nothing wakes the tracer, so an event costs the trap
// and a few map updates, as bpftrace's count() does.
//
// A site's counters (the tallies map, indexed by attach cookie):
//
//	0  u64 hits
//	8  u64 errors: returns with a negative signed value
//	16 u64 sum of the durations
//	24 u64 ^minimum duration: kept inverted so that 0 means unset and
//	       both bounds update with the same "keep the larger" step
//	32 u64 maximum duration
//
// The histogram map is keyed by u32 site, u32 summary.Bucket(duration).
// Every update is atomic: sleepable programs can be preempted mid-update
// by another hit on the same CPU.
const (
	tallyHits = 8 * iota
	tallyErrors
	tallySum
	tallyNotMin
	tallyMax
	tallySize
)

// maxHistBuckets bounds the (site, bucket) pairs of the histogram map:
// ~40 per power of two of spread per timed function is typical, so this
// holds hundreds of functions; durations past it are counted and reported.
const maxHistBuckets = 1 << 15

// casTries bounds the compare-and-swap loop of a bound: another hit on the
// same CPU must win each race in between, which needs preemption within a
// few instructions.
const casTries = 4

// tally emits the counting tail of a program. R6 holds pt_regs and, for a
// return probe, slotDur the call's entry time (0 when unseen).
func (g *progGen) tally(m maps, ret bool) {
	g.emit(
		asm.Mov.Reg(asm.R1, asm.R6),
		asm.FnGetAttachCookie.Call(),
		asm.StoreMem(asm.RFP, slotTmp, asm.R0, asm.Word),
	)
	g.lookup(m.tallies, slotTmp)
	g.emit(
		asm.JEq.Imm(asm.R0, 0, "exit"),
		asm.Mov.Reg(asm.R7, asm.R0),
		asm.Mov.Imm(asm.R1, 1),
		asm.StoreXAdd(asm.R7, asm.R1, asm.DWord), // hits
	)
	if !ret {
		return
	}
	ok := g.label()
	g.emit(
		asm.LoadMem(asm.R1, asm.R6, retReg, asm.DWord),
		asm.JSGE.Imm(asm.R1, 0, ok),
		asm.Mov.Imm(asm.R1, 1),
		asm.AddAtomic.Mem(asm.R7, asm.R1, asm.DWord, tallyErrors),
	)
	g.mark(ok)
	g.emit(
		asm.LoadMem(asm.R8, asm.RFP, slotDur, asm.DWord),
		asm.JEq.Imm(asm.R8, 0, "exit"),
		asm.FnKtimeGetNs.Call(),
		asm.Sub.Reg(asm.R0, asm.R8),
		asm.Mov.Reg(asm.R8, asm.R0),
		asm.JEq.Imm(asm.R8, 0, "exit"),
		asm.AddAtomic.Mem(asm.R7, asm.R8, asm.DWord, tallySum),
	)
	g.keepLarger(asm.R7, tallyMax, asm.R8)
	g.emit(
		asm.Mov.Reg(asm.R9, asm.R8),
		asm.Xor.Imm(asm.R9, -1),
	)
	g.keepLarger(asm.R7, tallyNotMin, asm.R9)
	g.bucket(asm.R8)
	g.emit(asm.StoreMem(asm.RFP, slotTmp+4, asm.R1, asm.Word))
	g.histAdd(m)
}

// keepLarger sets the u64 at ptr+off to v if v is larger (unsigned), by
// compare-and-swap. R0-R2 are scratch.
func (g *progGen) keepLarger(ptr asm.Register, off int16, v asm.Register) {
	done := g.label()
	g.emit(asm.LoadMem(asm.R0, ptr, off, asm.DWord))
	for range casTries {
		g.emit(
			asm.JGE.Reg(asm.R0, v, done),
			asm.Mov.Reg(asm.R2, asm.R0),
			asm.Mov.Reg(asm.R1, v),
			cmpxchg(ptr, asm.R1, off), // R0 = the old value
			asm.JEq.Reg(asm.R0, asm.R2, done),
		)
	}
	g.mark(done)
}

// cmpxchg is BPF_CMPXCHG on a u64: if *(dst+off) == R0, store src there;
// R0 = the old value. cilium/ebpf v0.22's Marshal takes the immediate
// before moving the atomic op into it, so CmpXchg.Mem alone loads as a
// fetch-add (TestTallyArithmetic): the immediate is set here too.
func cmpxchg(dst, src asm.Register, off int16) asm.Instruction {
	ins := asm.CmpXchg.Mem(dst, src, asm.DWord, off)
	ins.Constant = int64(asm.CmpXchg >> 8)
	return ins
}

// bucket computes summary.Bucket of v (v ≥ 1) into R1: v below 64, else
// (e-6)·64 + v>>(e-6) with e = ⌊log2 v⌋, found by halving. R2-R3 are
// scratch.
func (g *progGen) bucket(v asm.Register) {
	done := g.label()
	g.emit(
		asm.Mov.Reg(asm.R1, v),
		asm.JLT.Imm(asm.R1, 64, done),
		asm.Mov.Imm(asm.R2, 0), // e
	)
	g.addLog2()
	g.emit(
		asm.Sub.Imm(asm.R2, 6),
		asm.Mov.Reg(asm.R1, v),
		asm.RSh.Reg(asm.R1, asm.R2),
		asm.LSh.Imm(asm.R2, 6),
		asm.Add.Reg(asm.R1, asm.R2),
	)
	g.mark(done)
}

// histAdd adds one to the histogram entry keyed at slotTmp, creating it
// if need be; a full map counts the value as uncounted.
func (g *progGen) histAdd(m maps) {
	insert, full := g.label(), g.label()
	g.addOne(m.hist, slotTmp, insert)
	g.emit(asm.Ja.Label("exit"))
	g.mark(insert)
	g.emit(storeImm64(asm.RFP, slotAddr, 1))
	g.update(m.hist, slotTmp, slotAddr, 1) // BPF_NOEXIST
	g.emit(asm.JEq.Imm(asm.R0, 0, "exit"))
	// Another hit inserted it in between (EEXIST), or the map is full.
	g.addOne(m.hist, slotTmp, full)
	g.emit(asm.Ja.Label("exit"))
	g.mark(full)
	g.count(m, statUncounted)
}

// readTallies reads back the counts of every site, once the probes are
// gone.
func (o *kernelObjs) readTallies(sites []probe.Site) ([]probe.Tally, error) {
	all := make([]probe.Tally, len(sites))
	for i := range sites {
		var v [tallySize / 8]uint64
		if err := o.tallies.Lookup(uint32(i), &v); err != nil {
			return nil, fmt.Errorf("reading the counts of %s: %w", sites[i].Spec.Text, err)
		}
		site := &sites[i]
		t := probe.Tally{Probe: site.Spec.Text, Func: site.Func, Kind: site.Spec.Kind,
			Hits: v[tallyHits/8], Errors: v[tallyErrors/8], DurationSum: v[tallySum/8], DurationMax: v[tallyMax/8]}
		if n := v[tallyNotMin/8]; n != 0 {
			t.DurationMin = ^n
		}
		all[i] = t
	}
	var key [2]uint32
	var n uint64
	it := o.hist.Iterate()
	for it.Next(&key, &n) {
		if int(key[0]) < len(all) {
			t := &all[key[0]]
			if t.Durations == nil {
				t.Durations = map[int]uint64{}
			}
			t.Durations[int(key[1])] += n
		}
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("reading the duration histograms: %w", err)
	}
	var hit []probe.Tally
	for _, t := range all {
		if t.Hits > 0 {
			hit = append(hit, t)
		}
	}
	return hit, nil
}

// addLog2 adds ⌊log2 R1⌋ to R2 by halving (R1 ≥ 1; BPF has no bit scan):
// R1 ends as 1, R3 is scratch. tally's bucket and the aggregations'
// hist both take it.
func (g *progGen) addLog2() {
	for _, sh := range []int32{32, 16, 8, 4, 2, 1} {
		next := g.label()
		g.emit(
			asm.Mov.Reg(asm.R3, asm.R1),
			asm.RSh.Imm(asm.R3, sh),
			asm.JEq.Imm(asm.R3, 0, next),
			asm.Mov.Reg(asm.R1, asm.R3),
			asm.Add.Imm(asm.R2, sh),
		)
		g.mark(next)
	}
}
