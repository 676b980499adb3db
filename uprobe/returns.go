//go:build linux && amd64

package uprobe

import (
	"github.com/cilium/ebpf/asm"
	"github.com/utap/utap/probe"
)

// A return event's duration: a hidden entry probe (the stamp) records
// bpf_ktime_get_ns under a key naming the call, and the return probe
// takes it back. The key is 24 bytes:
//
//	thread calls:    pid_tgid, site, stack position of the return address
//	goroutine calls: g (r14),  site, g.stack.hi - that position
//
// The stack position of the return address tells recursive calls apart.
// At entry it is rsp; at a RET (probed before it runs) rsp again; in a
// kernel uretprobe, which runs after the return, rsp-8. Go goroutines move
// between threads and the runtime copies their stacks elsewhere as they
// grow, so a Go call is keyed by its goroutine (r14 holds g in Go's
// register ABI, and a g does not move) and its depth below the stack's top,
// which copying preserves. The site (attach cookie) keeps a tail call's
// two frames at one position apart.
//
// A return probe needs two kernel probes, attached by separate links one
// after the other, and taken out the same way. In between, calls would be
// stamped with no return probe to take the stamp back (and reported as
// returns not seen), or return without a stamp. So both programs do
// nothing until every link is in (the armed flag), and stop before the
// first link comes out: only the calls running at those two instants are
// cut short, as they must be.
type callKey struct {
	goroutine bool
	spAdjust  int32 // added to rsp: -8 in a uretprobe
}

const keySize = 24

// timesValueSize is the entry-time map's value: the entry time, then the
// System V argument registers at entry, which a return probe showing
// output arguments reads (probe.EntryArg: the registers are clobbered by
// the return). Kept for every call: 48 bytes more per open call cost less
// than a second map, and a followed exec's new image may need them.
const timesValueSize = 8 + 8*probe.MaxEntryArgs

// gStackHi is the offset of g.stack.hi in the Go runtime's g (stack{lo,
// hi} is its first field).
const gStackHi = 8

// storeKey writes the call key to slotKey. R6 holds pt_regs.
func (g *progGen) storeKey(k callKey) {
	if k.goroutine {
		g.emit(
			asm.LoadMem(asm.R3, asm.R6, regR14, asm.DWord), // r14: the g register of Go's ABIInternal
			asm.StoreMem(asm.RFP, slotKey, asm.R3, asm.DWord),
			asm.Add.Imm(asm.R3, gStackHi),
		)
		// A g is always mapped and touched: no need to fault pages in.
		g.emit(
			asm.Mov.Reg(asm.R1, asm.RFP),
			asm.Add.Imm(asm.R1, slotKey+16),
			asm.Mov.Imm(asm.R2, 8),
			asm.FnProbeReadUser.Call(),
			asm.LoadMem(asm.R0, asm.RFP, slotKey+16, asm.DWord),
			asm.LoadMem(asm.R1, asm.R6, regSP, asm.DWord),
			asm.Sub.Reg(asm.R0, asm.R1),
		)
	} else {
		g.emit(
			asm.FnGetCurrentPidTgid.Call(),
			asm.StoreMem(asm.RFP, slotKey, asm.R0, asm.DWord),
			asm.LoadMem(asm.R0, asm.R6, regSP, asm.DWord),
		)
		if k.spAdjust != 0 {
			g.emit(asm.Add.Imm(asm.R0, k.spAdjust))
		}
	}
	g.emit(
		asm.StoreMem(asm.RFP, slotKey+16, asm.R0, asm.DWord),
		asm.Mov.Reg(asm.R1, asm.R6),
		asm.FnGetAttachCookie.Call(),
		asm.StoreMem(asm.RFP, slotKey+8, asm.R0, asm.DWord),
	)
}

// compileStamp generates the hidden entry program of return probes: it
// records the entry time of every call. Its rsp needs no adjusting.
func compileStamp(m maps, k callKey) asm.Instructions {
	k.spAdjust = 0
	g := &progGen{code: &code{}} // no expressions
	g.emit(asm.Mov.Reg(asm.R6, asm.R1))
	g.filterTgid(m)
	g.requireArmed(m)
	g.storeKey(k)
	g.emit(
		asm.FnKtimeGetNs.Call(),
		asm.StoreMem(asm.RFP, slotEntry, asm.R0, asm.DWord),
	)
	for i, off := range argRegs[probe.ABISysV][:probe.MaxEntryArgs] {
		g.emit(
			asm.LoadMem(asm.R1, asm.R6, off, asm.DWord),
			asm.StoreMem(asm.RFP, int16(slotEntry+8+8*i), asm.R1, asm.DWord),
		)
	}
	g.update(m.times, slotKey, slotEntry, 0) // BPF_ANY
	g.count(m, statEntered)
	g.mark("exit")
	g.emit(asm.Mov.Imm(asm.R0, 0), asm.Return())
	return g.insns
}

// requireArmed exits unless the return probes are armed.
func (g *progGen) requireArmed(m maps) {
	g.emit(asm.StoreImm(asm.RFP, slotTmp, 0, asm.Word))
	g.lookup(m.armed, slotTmp)
	g.emit(
		asm.JEq.Imm(asm.R0, 0, "exit"),
		asm.LoadMem(asm.R1, asm.R0, 0, asm.Word),
		asm.JEq.Imm(asm.R1, 0, "exit"),
	)
}

// takeEntryTime moves the call's entry time from the times map to slotDur
// (0 when unseen), and with args its argument registers to slotEntry (0s
// when unseen), before the condition: a return the condition drops must
// still release its entry.
func (g *progGen) takeEntryTime(m maps, k callKey, args bool) {
	none, done := g.label(), g.label()
	g.storeKey(k)
	g.lookup(m.times, slotKey)
	g.emit(asm.JEq.Imm(asm.R0, 0, none))
	for i := range probe.MaxEntryArgs * b2i(args) {
		g.emit(
			asm.LoadMem(asm.R1, asm.R0, int16(8+8*i), asm.DWord),
			asm.StoreMem(asm.RFP, int16(slotEntry+8+8*i), asm.R1, asm.DWord),
		)
	}
	g.emit(
		asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord),
		asm.StoreMem(asm.RFP, slotDur, asm.R1, asm.DWord),
		mapPtr(asm.R1, m.times),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, slotKey),
		asm.FnMapDeleteElem.Call(),
	)
	g.count(m, statReturned)
	g.emit(asm.Ja.Label(done))
	g.mark(none)
	g.emit(storeImm64(asm.RFP, slotDur, 0))
	for i := range probe.MaxEntryArgs * b2i(args) {
		g.emit(storeImm64(asm.RFP, int16(slotEntry+8+8*i), 0))
	}
	g.count(m, statUnentered)
	g.mark(done)
}

// storeReturn fills a return record's rax and duration; R0 holds the
// record's time, R7 the record.
func (g *progGen) storeReturn() {
	unseen := g.label()
	g.emit(
		asm.LoadMem(asm.R1, asm.R6, retReg, asm.DWord),
		asm.StoreMem(asm.R7, hdrSize, asm.R1, asm.DWord),
		asm.LoadMem(asm.R1, asm.RFP, slotDur, asm.DWord),
		asm.JEq.Imm(asm.R1, 0, unseen),
		asm.Sub.Reg(asm.R0, asm.R1),
		asm.Mov.Reg(asm.R1, asm.R0),
	)
	g.mark(unseen)
	g.emit(asm.StoreMem(asm.R7, hdrSize+8, asm.R1, asm.DWord))
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
