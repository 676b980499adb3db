//go:build linux && amd64

package uprobe

import (
	"math"

	"github.com/cilium/ebpf/asm"
	"github.com/utap/utap/internal/agg"
	"github.com/utap/utap/probe"
)

// aggregate emits the aggregating tail of a program (agg.go): the value,
// the key, then the map entry's update. R6 holds pt_regs; the condition
// has passed.
func (g *progGen) aggregate(s *probe.Site, l *aggLayout, m maps) error {
	a := l.spec.Agg
	if a.Value >= 0 {
		if err := g.aggFetch(s.Fetches[a.Value].Expr, slotAggVal, slotAggValFault); err != nil {
			return err
		}
	}
	for off := 0; off < l.keySize; off += 8 {
		g.emit(storeImm64(asm.RFP, int16(slotAggKey+off), 0))
	}
	g.emit(
		asm.Mov.Reg(asm.R1, asm.R6),
		asm.FnGetAttachCookie.Call(),
		asm.StoreMem(asm.RFP, slotAggKey, asm.R0, asm.Word),
	)
	for i, k := range a.Keys {
		off := int16(slotAggKey + l.partOff[i])
		switch k.Kind {
		case probe.KeyPID:
			g.emit(asm.FnGetCurrentPidTgid.Call(), asm.RSh.Imm(asm.R0, 32), asm.StoreMem(asm.RFP, off, asm.R0, asm.DWord))
		case probe.KeyTID:
			g.emit(asm.FnGetCurrentPidTgid.Call(), asm.StoreMem(asm.RFP, off, asm.R0, asm.Word))
		case probe.KeyComm:
			g.emit(
				asm.Mov.Reg(asm.R1, asm.RFP),
				asm.Add.Imm(asm.R1, int32(off)),
				asm.Mov.Imm(asm.R2, 16),
				asm.FnGetCurrentComm.Call(),
			)
		case probe.KeyExpr:
			if e := s.Fetches[k.Fetch].Expr; isStrKey(e) {
				if err := g.strKey(e.(*probe.StrOf), off); err != nil {
					return err
				}
				continue
			}
			if err := g.aggFetch(s.Fetches[k.Fetch].Expr, off, slotAddr); err != nil {
				return err
			}
			ok := g.label()
			g.emit(
				asm.LoadMem(asm.R1, asm.RFP, slotAddr, asm.DWord),
				asm.JEq.Imm(asm.R1, 0, ok),
				storeImm64(asm.RFP, off, 0),
				asm.LoadMem(asm.R1, asm.RFP, slotAggKey+4, asm.Word),
				asm.Or.Imm(asm.R1, int32(1)<<i),
				asm.StoreMem(asm.RFP, slotAggKey+4, asm.R1, asm.Word),
			)
			g.mark(ok)
		}
	}
	g.aggEntry(l, m)
	g.aggUpdate(l)
	return nil
}

// strKey reads str(x) into the key part at off (zeroed): the result as
// a record's string slot has it, then the bytes.
func (g *progGen) strKey(e *probe.StrOf, off int16) error {
	g.emit(storeImm64(asm.RFP, slotFault, 0))
	if err := g.x.expr(e.Addr); err != nil {
		return err
	}
	faulted, null, done := g.label(), g.label(), g.label()
	g.emit(
		asm.LoadMem(asm.R1, asm.RFP, slotFault, asm.DWord),
		asm.JNE.Imm(asm.R1, 0, faulted),
		asm.JEq.Imm(asm.R0, 0, null),
	)
	g.x.mem.readStrInto(asm.RFP, int32(off)+8, probe.MaxStrLen+1)
	g.emit(
		asm.StoreMem(asm.RFP, off, asm.R0, asm.DWord),
		asm.Ja.Label(done),
	)
	g.mark(null)
	g.emit(storeImm64(asm.RFP, off, strNull), asm.Ja.Label(done))
	g.mark(faulted)
	g.emit(storeImm64(asm.RFP, off, -14)) // -EFAULT
	g.mark(done)
	return nil
}

// aggFetch computes e into the frame slot at, and its fault flag into
// fault.
func (g *progGen) aggFetch(e probe.Expr, at, fault int16) error {
	g.emit(storeImm64(asm.RFP, slotFault, 0))
	if err := g.x.expr(e); err != nil {
		return err
	}
	g.emit(
		asm.StoreMem(asm.RFP, at, asm.R0, asm.DWord),
		asm.LoadMem(asm.R1, asm.RFP, slotFault, asm.DWord),
		asm.StoreMem(asm.RFP, fault, asm.R1, asm.DWord),
	)
	return nil
}

// aggEntry leaves in R7 this CPU's value of the key's entry, inserting a
// zeroed one (from the zero map) when there is none; a full map counts
// the hit in statAggFull and exits.
func (g *progGen) aggEntry(l *aggLayout, m maps) {
	found, full := g.label(), g.label()
	g.lookup(l.mapName, slotAggKey)
	g.emit(asm.JNE.Imm(asm.R0, 0, found))
	g.emit(asm.StoreImm(asm.RFP, slotTmp, 0, asm.Word))
	g.lookup(m.aggZero, slotTmp)
	g.emit(
		asm.JEq.Imm(asm.R0, 0, "exit"),
		asm.Mov.Reg(asm.R3, asm.R0),
		mapPtr(asm.R1, l.mapName),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, slotAggKey),
		asm.Mov.Imm(asm.R4, 1), // BPF_NOEXIST: another hit may have made it
		asm.FnMapUpdateElem.Call(),
	)
	g.lookup(l.mapName, slotAggKey)
	g.emit(asm.JEq.Imm(asm.R0, 0, full))
	g.mark(found)
	g.emit(asm.Mov.Reg(asm.R7, asm.R0))
	done := g.label()
	g.emit(asm.Ja.Label(done))
	g.mark(full)
	g.count(m, statAggFull)
	g.emit(asm.Ja.Label("exit"))
	g.mark(done)
}

// aggUpdate adds the hit to the value R7 points to. The count goes last:
// the kernel copies a value to user space a word at a time from its
// start, so a read made while a hit is being added sees the other fields
// as of at least the hits it counts (aggread.go).
func (g *progGen) aggUpdate(l *aggLayout) {
	a := l.spec.Agg
	if a.Value >= 0 {
		ok := g.label()
		g.emit(
			asm.LoadMem(asm.R1, asm.RFP, slotAggValFault, asm.DWord),
			asm.JEq.Imm(asm.R1, 0, ok),
			asm.Mov.Imm(asm.R1, 1),
			asm.AddAtomic.Mem(asm.R7, asm.R1, asm.DWord, aggUnreadable),
			asm.Ja.Label("exit"),
		)
		g.mark(ok)
		g.emit(asm.LoadMem(asm.R8, asm.RFP, slotAggVal, asm.DWord))
	}
	switch a.Kind.Func {
	case agg.Sum, agg.Avg, agg.Stats:
		g.emit(asm.AddAtomic.Mem(asm.R7, asm.R8, asm.DWord, aggSum))
	case agg.Min, agg.Max:
		g.emit(
			asm.LoadImm(asm.R9, math.MinInt64, asm.DWord),
			asm.Xor.Reg(asm.R9, asm.R8),
		)
		if a.Kind.Func == agg.Max {
			g.keepLarger(asm.R7, aggMax, asm.R9)
		} else {
			g.emit(asm.Xor.Imm(asm.R9, -1))
			g.keepLarger(asm.R7, aggNotMin, asm.R9)
		}
	case agg.Hist:
		g.histBucket(asm.R8)
		g.addBucket(l)
	case agg.LHist:
		g.linearBucket(asm.R8, a.Kind)
		g.addBucket(l)
	}
	g.emit(
		asm.Mov.Imm(asm.R1, 1),
		asm.AddAtomic.Mem(asm.R7, asm.R1, asm.DWord, aggCount),
	)
}

// histBucket computes agg.Kind.Bucket of v for a hist into R1: 0 below
// 0, 1 for 0, else 2 + ⌊log2 v⌋, found by halving. R2-R3 are scratch.
func (g *progGen) histBucket(v asm.Register) {
	done := g.label()
	g.emit(
		asm.Mov.Imm(asm.R1, 0),
		asm.JSLT.Imm(v, 0, done),
		asm.Mov.Imm(asm.R1, 1),
		asm.JEq.Imm(v, 0, done),
		asm.Mov.Reg(asm.R1, v),
		asm.Mov.Imm(asm.R2, 2),
	)
	g.addLog2()
	g.emit(asm.Mov.Reg(asm.R1, asm.R2))
	g.mark(done)
}

// linearBucket computes agg.Kind.Bucket of v for lhist k into R1: 0
// below min, n+1 at or above max, else 1 + (v-min)/step. R2 is scratch.
func (g *progGen) linearBucket(v asm.Register, k agg.Kind) {
	n := int32((k.Max - k.Min) / k.Step)
	done := g.label()
	g.emit(
		asm.Mov.Imm(asm.R1, 0),
		asm.LoadImm(asm.R2, k.Min, asm.DWord),
		asm.JSLT.Reg(v, asm.R2, done),
		asm.Mov.Imm(asm.R1, n+1),
		asm.LoadImm(asm.R2, k.Max, asm.DWord),
		asm.JSGE.Reg(v, asm.R2, done),
		asm.Mov.Reg(asm.R1, v),
		asm.LoadImm(asm.R2, k.Min, asm.DWord),
		asm.Sub.Reg(asm.R1, asm.R2),
		asm.LoadImm(asm.R2, k.Step, asm.DWord),
		asm.Div.Reg(asm.R1, asm.R2), // unsigned: 0 ≤ v-min < max-min
		asm.Add.Imm(asm.R1, 1),
	)
	g.mark(done)
}

// addBucket adds one to the bucket R1 indexes in the value R7 points
// to; the bound check is the verifier's proof.
func (g *progGen) addBucket(l *aggLayout) {
	g.emit(
		asm.JGT.Imm(asm.R1, int32(l.buckets-1), "exit"),
		asm.LSh.Imm(asm.R1, 3),
		asm.Add.Reg(asm.R1, asm.R7),
		asm.Mov.Imm(asm.R2, 1),
		asm.AddAtomic.Mem(asm.R1, asm.R2, asm.DWord, aggBuckets),
	)
}
