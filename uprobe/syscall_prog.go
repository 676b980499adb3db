//go:build linux && amd64

package uprobe

import (
	"fmt"

	"github.com/cilium/ebpf/asm"
	"github.com/utap/utap/probe"
)

// The two system call programs (syscall.go). Registers: R6 the record
// being built or completed, R8 the number's table entry, R9 the
// tracepoint's context. The condition's code (the expression generator's,
// with R6 as its "pt_regs") clobbers R8 and R9, so R8 is kept on the
// stack across it.

// Offsets in the records of the raw_syscalls tracepoints and of the
// per-call syscalls:sys_{enter,exit}_NAME ones, after the 8-byte common
// header: both start with the number (a long in raw_syscalls, an int in
// the others: its low 32 bits are read); sys_enter has the six
// arguments, sys_exit the return value, at the same offsets in both.
const (
	tpOffID   = 8
	tpOffArgs = 16
	tpOffRet  = 16
)

// Frame slots of these programs, below the expression generator's own
// (slotFault, slotTmp) and in place of the return probes' (slotKey).
const (
	sysSlotAddr = -32 // a user address kept across helper calls
	sysSlotKey  = -40 // pid_tgid, the open calls' key
	sysSlotConf = -48 // R8 across the condition
	sysSlotDst  = -56 // the capture slot being filled
)

// insns generates the enter (exit false) or exit program. The enter
// program reads nargs arguments from its record: a per-call tracepoint's
// record ends after the call's own, and the kernel refuses a program that
// reads past the end of any record it is attached to.
func (ss *sysSpec) insns(m maps, v4, exit bool, nargs int) (asm.Instructions, error) {
	g := newProgGen(probe.ABISysV, probe.Return, v4, reads{})
	// Tracepoints cannot sleep: reads use bpf_probe_read_user (reads{}).
	g.emit(asm.Mov.Reg(asm.R9, asm.R1))
	// The table first: for most calls of most processes it is all that runs.
	g.emit(
		asm.LoadMem(asm.R1, asm.R9, tpOffID, asm.Word),
		asm.JGE.Imm(asm.R1, sysMaxNr, "exit"), // negative too, as unsigned
		asm.StoreMem(asm.RFP, slotTmp, asm.R1, asm.Word),
	)
	g.lookup(mapSysConf, slotTmp)
	g.emit(
		asm.JEq.Imm(asm.R0, 0, "exit"),
		asm.Mov.Reg(asm.R8, asm.R0),
		asm.LoadMem(asm.R1, asm.R8, 0, asm.DWord),
		asm.JEq.Imm(asm.R1, 0, "exit"),
		asm.FnGetCurrentPidTgid.Call(),
		asm.StoreMem(asm.RFP, sysSlotKey, asm.R0, asm.DWord),
	)
	if exit {
		return ss.exitInsns(g, m)
	}
	return ss.enterInsns(g, m, nargs)
}

func (ss *sysSpec) enterInsns(g *progGen, m maps, nargs int) (asm.Instructions, error) {
	g.filterTgid(maps{tgids: mapTgids})
	ss.stackRecord(g, m)
	g.emit(asm.StoreImm(asm.RFP, slotTmp, 0, asm.Word))
	g.lookup(mapSysBuild, slotTmp)
	g.emit(
		asm.JEq.Imm(asm.R0, 0, "exit"),
		asm.Mov.Reg(asm.R6, asm.R0),
		asm.LoadMem(asm.R1, asm.R8, 0, asm.DWord),
		asm.StoreMem(asm.R6, sysOffSite, asm.R1, asm.DWord),
		asm.LoadMem(asm.R1, asm.RFP, sysSlotKey, asm.DWord),
		asm.StoreMem(asm.R6, sysOffPidTgid, asm.R1, asm.DWord),
		asm.LoadMem(asm.R1, asm.R9, tpOffID, asm.Word),
		asm.StoreMem(asm.R6, sysOffNr, asm.R1, asm.DWord),
		storeImm64(asm.R6, sysOffDur, 0),
		storeImm64(asm.R6, sysOffFlags, 0),
		storeImm64(asm.R6, regAX, 0),
	)
	for i, off := range sysArgOff {
		if i >= nargs {
			g.emit(storeImm64(asm.R6, off, 0))
			continue
		}
		g.emit(
			asm.LoadMem(asm.R1, asm.R9, int16(tpOffArgs+8*i), asm.DWord),
			asm.StoreMem(asm.R6, off, asm.R1, asm.DWord),
		)
	}
	ss.stackPointer(g)
	// Every capture starts unread; each side fills its own.
	done := g.label()
	for i := range sysMaxCaps {
		g.ifCapture(i, done)
		g.capDst(ss, i, done)
		g.emit(
			asm.LoadMem(asm.R1, asm.RFP, sysSlotDst, asm.DWord),
			storeImm64(asm.R1, 0, sysNotRead),
		)
	}
	g.mark(done)
	ss.captures(g, false)
	g.emit(
		asm.FnKtimeGetNs.Call(),
		asm.StoreMem(asm.R6, sysOffTime, asm.R0, asm.DWord),
		asm.LoadMem(asm.R1, asm.R8, confOffFlags, asm.Word),
		asm.JSet.Imm(asm.R1, sysNoReturn, "noreturn"),
	)
	g.emit(
		mapPtr(asm.R1, mapSysOpen),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, sysSlotKey),
		asm.Mov.Reg(asm.R3, asm.R6),
		asm.Mov.Imm(asm.R4, 0), // BPF_ANY: a stale entry is replaced
		asm.FnMapUpdateElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "exit"),
	)
	g.count(m, statLost) // no room for another open call
	g.emit(asm.Ja.Label("exit"))
	g.mark("noreturn")
	g.emit(asm.StoreMem(asm.RFP, sysSlotConf, asm.R8, asm.DWord))
	if err := ss.condition(g, "exit"); err != nil {
		return nil, err
	}
	ss.output(g, m)
	g.mark("exit")
	g.emit(asm.Mov.Imm(asm.R0, 0), asm.Return())
	return g.insns, nil
}

func (ss *sysSpec) exitInsns(g *progGen, m maps) (asm.Instructions, error) {
	g.emit(
		asm.LoadMem(asm.R1, asm.R8, confOffFlags, asm.Word),
		asm.JSet.Imm(asm.R1, sysNoReturn, "exit"), // sent at entry
	)
	g.lookup(mapSysOpen, sysSlotKey)
	g.emit(
		asm.JEq.Imm(asm.R0, 0, "exit"),
		asm.Mov.Reg(asm.R6, asm.R0),
		// An entry of another call (its exit unseen) is dropped.
		asm.LoadMem(asm.R1, asm.R6, sysOffNr, asm.DWord),
		asm.LoadMem(asm.R2, asm.R9, tpOffID, asm.Word),
		asm.JNE.Reg(asm.R1, asm.R2, "forget"),
		asm.LoadMem(asm.R1, asm.R9, tpOffRet, asm.DWord),
		asm.StoreMem(asm.R6, regAX, asm.R1, asm.DWord),
		storeImm64(asm.R6, sysOffFlags, sysReturned),
	)
	dyingCall(g)
	g.emit(
		asm.FnKtimeGetNs.Call(),
		asm.LoadMem(asm.R1, asm.R6, sysOffTime, asm.DWord),
		asm.Sub.Reg(asm.R0, asm.R1),
		asm.StoreMem(asm.R6, sysOffDur, asm.R0, asm.DWord),
		asm.StoreMem(asm.RFP, sysSlotConf, asm.R8, asm.DWord),
	)
	if err := ss.condition(g, "forget"); err != nil {
		return nil, err
	}
	g.emit(asm.LoadMem(asm.R8, asm.RFP, sysSlotConf, asm.DWord))
	ss.captures(g, true)
	ss.countDirents(g)
	ss.output(g, m)
	g.mark("forget")
	g.emit(
		mapPtr(asm.R1, mapSysOpen),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, sysSlotKey),
		asm.FnMapDeleteElem.Call(),
	)
	g.mark("exit")
	g.emit(asm.Mov.Imm(asm.R0, 0), asm.Return())
	return g.insns, nil
}

// condition evaluates the number's condition on the record in R6 and
// jumps to fail unless it holds; R8 is reloaded from its slot after.
func (ss *sysSpec) condition(g *progGen, fail string) error {
	if len(ss.conds) == 0 {
		return nil
	}
	pass := g.label()
	blocks := make([]string, len(ss.conds))
	g.emit(asm.LoadMem(asm.R1, asm.R8, confOffCond, asm.Word))
	for i := range ss.conds {
		blocks[i] = g.label()
		g.emit(asm.JEq.Imm(asm.R1, int32(i+1), blocks[i]))
	}
	g.emit(asm.Ja.Label(pass))
	for i, c := range ss.conds {
		g.mark(blocks[i])
		g.emit(storeImm64(asm.RFP, slotFault, 0))
		if err := g.x.expr(c); err != nil {
			return fmt.Errorf("%w: condition %s: %w", ErrSyscall, c, err)
		}
		g.emit(
			asm.JEq.Imm(asm.R0, 0, fail),
			asm.LoadMem(asm.R1, asm.RFP, slotFault, asm.DWord),
			asm.JNE.Imm(asm.R1, 0, fail),
			asm.Ja.Label(pass),
		)
	}
	g.mark(pass)
	g.emit(asm.LoadMem(asm.R8, asm.RFP, sysSlotConf, asm.DWord))
	return nil
}

// output sends the record in R6 to the ring, waking the reader only
// when a quarter of the ring is unread, as probe records do.
func (ss *sysSpec) output(g *progGen, m maps) {
	g.wakeFlags(m, asm.R4)
	fits := g.label()
	g.emit(
		asm.LoadMem(asm.R3, asm.R8, confOffSize, asm.Word),
		asm.JLE.Imm(asm.R3, int32(ss.value), fits),
		asm.Mov.Imm(asm.R3, int32(ss.value)),
	)
	g.mark(fits)
	sent := g.label()
	g.emit(
		mapPtr(asm.R1, mapEvents),
		asm.Mov.Reg(asm.R2, asm.R6),
		asm.FnRingbufOutput.Call(),
		asm.JEq.Imm(asm.R0, 0, sent),
	)
	g.count(m, statLost)
	g.mark(sent)
	g.emit(asm.Mov.Reg(asm.R0, asm.R0)) // the label's instruction
}

// ifCapture goes on when the number has capture i, else jumps to none.
func (g *progGen) ifCapture(i int, none string) {
	g.emit(
		asm.LoadMem(asm.R1, asm.R8, confOffNcap, asm.Word),
		asm.JLE.Imm(asm.R1, int32(i), none),
	)
}

// capField loads a field of capture i's table entry into r.
func (g *progGen) capField(r asm.Register, i int, off int16, size asm.Size) {
	g.emit(asm.LoadMem(r, asm.R8, int16(sysConfCaps+i*sysCapSize)+off, size))
}

// capDst keeps the address of capture i's slot at sysSlotDst; a slot
// beyond the record (never, for a table this package wrote) skips.
func (g *progGen) capDst(ss *sysSpec, i int, skip string) {
	g.capField(asm.R1, i, capOffSlot, asm.Half)
	g.emit(
		asm.JGT.Imm(asm.R1, int32(ss.value-ss.room), skip),
		asm.Add.Reg(asm.R1, asm.R6),
		asm.StoreMem(asm.RFP, sysSlotDst, asm.R1, asm.DWord),
	)
}

// captures reads the captures of one side. At exit, an entry capture
// whose read failed is read again (see syscall.go).
func (ss *sysSpec) captures(g *progGen, exit bool) {
	// Only the readers some traced call needs at index i are generated:
	// the verifier walks each, and the iovec and array readers are long.
	kindsAt := make([]map[capKind]bool, sysMaxCaps)
	indirectAt := make([]bool, sysMaxCaps)
	last := -1
	for _, c := range ss.calls {
		for i, cp := range c.info.caps[:min(len(c.info.caps), sysMaxCaps)] {
			if cp.kind != capNone && (cp.exit == exit || (exit && !cp.kind.array())) {
				if kindsAt[i] == nil {
					kindsAt[i] = map[capKind]bool{}
				}
				kindsAt[i][cp.kind] = true
				indirectAt[i] = indirectAt[i] || cp.indirect
				last = max(last, i)
			}
		}
	}
	if last < 0 {
		return
	}
	done := g.label()
	for i := range last + 1 {
		kinds := kindsAt[i]
		if kinds == nil {
			continue
		}
		next := g.label()
		g.ifCapture(i, done)
		g.capField(asm.R1, i, capOffExit, asm.Byte)
		if !exit {
			g.emit(asm.JNE.Imm(asm.R1, 0, next))
		} else {
			read := g.label()
			g.emit(asm.JNE.Imm(asm.R1, 0, read))
			// An entry capture: again only if it failed, and not an array.
			g.capField(asm.R1, i, capOffKind, asm.Byte)
			g.emit(
				asm.JEq.Imm(asm.R1, int32(capStrArray), next),
				asm.JEq.Imm(asm.R1, int32(capStrCount), next),
			)
			g.capDst(ss, i, next)
			g.emit(
				asm.LoadMem(asm.R1, asm.RFP, sysSlotDst, asm.DWord),
				asm.LoadMem(asm.R1, asm.R1, 0, asm.DWord),
				asm.JSGE.Imm(asm.R1, 0, next),
			)
			g.mark(read)
		}
		g.capDst(ss, i, next)
		// The address: argument at a table-given offset of the record.
		g.capField(asm.R1, i, capOffArg, asm.Half)
		g.emit(
			asm.JGT.Imm(asm.R1, regDI, next),
			asm.Add.Reg(asm.R1, asm.R6),
			asm.LoadMem(asm.R1, asm.R1, 0, asm.DWord),
			asm.StoreMem(asm.RFP, sysSlotAddr, asm.R1, asm.DWord),
		)
		if indirectAt[i] {
			// The address is the pointer there (capIndirect).
			direct := g.label()
			g.capField(asm.R1, i, capOffFlags, asm.Byte)
			g.emit(
				asm.And.Imm(asm.R1, capIndirect),
				asm.JEq.Imm(asm.R1, 0, direct),
				asm.LoadMem(asm.R3, asm.RFP, sysSlotAddr, asm.DWord),
				asm.JEq.Imm(asm.R3, 0, next),
				asm.Mov.Reg(asm.R1, asm.RFP),
				asm.Add.Imm(asm.R1, sysSlotAddr),
				asm.Mov.Imm(asm.R2, 8),
				asm.FnProbeReadUser.Call(),
				asm.JNE.Imm(asm.R0, 0, next),
			)
			g.mark(direct)
		}
		g.capField(asm.R1, i, capOffKind, asm.Byte)
		labels := map[capKind]string{}
		for _, k := range []capKind{capStr, capBytes, capStrArray, capStrCount, capIov} {
			if kinds[k] {
				labels[k] = g.label()
				g.emit(asm.JEq.Imm(asm.R1, int32(k), labels[k]))
			}
		}
		g.emit(asm.Ja.Label(next))
		if l, ok := labels[capStr]; ok {
			g.mark(l)
			ss.readStr(g, i, next)
		}
		if l, ok := labels[capBytes]; ok {
			g.mark(l)
			ss.readBytes(g, i, next)
		}
		if l, ok := labels[capStrArray]; ok {
			g.mark(l)
			ss.readStrArray(g, next)
		}
		if l, ok := labels[capStrCount]; ok {
			g.mark(l)
			ss.countStrArray(g, next)
		}
		if l, ok := labels[capIov]; ok {
			g.mark(l)
			ss.readIov(g, i, next, exit)
		}
		g.mark(next)
	}
	g.mark(done)
	g.emit(asm.Mov.Reg(asm.R0, asm.R0))
}

// readStr reads capture i, a string, into its slot.
func (ss *sysSpec) readStr(g *progGen, i int, next string) {
	sized := g.label()
	g.capField(asm.R2, i, capOffMax, asm.Word)
	g.emit(
		asm.JEq.Imm(asm.R2, 0, next),
		asm.JLE.Imm(asm.R2, int32(ss.room-8), sized),
		asm.Mov.Imm(asm.R2, int32(ss.room-8)),
	)
	g.mark(sized)
	g.emit(
		asm.LoadMem(asm.R1, asm.RFP, sysSlotDst, asm.DWord),
		asm.Add.Imm(asm.R1, 8),
		asm.LoadMem(asm.R3, asm.RFP, sysSlotAddr, asm.DWord),
		asm.FnProbeReadUserStr.Call(),
		asm.LoadMem(asm.R1, asm.RFP, sysSlotDst, asm.DWord),
		asm.StoreMem(asm.R1, 0, asm.R0, asm.DWord),
		asm.Ja.Label(next),
	)
}

// readBytes reads capture i, bytes of a fixed length or one an argument
// or the return value gives (negative: nothing to read), capped at max.
func (ss *sysSpec) readBytes(g *progGen, i int, next string) {
	fixed, capped, sized := g.label(), g.label(), g.label()
	g.capField(asm.R2, i, capOffMax, asm.Word)
	g.capField(asm.R1, i, capOffLen, asm.Half)
	g.emit(
		asm.JEq.Imm(asm.R1, 0, fixed),
		asm.JGT.Imm(asm.R1, regDI, next),
		asm.Add.Reg(asm.R1, asm.R6),
		asm.LoadMem(asm.R1, asm.R1, 0, asm.DWord),
		asm.JSLT.Imm(asm.R1, 0, next),
		asm.JGE.Reg(asm.R1, asm.R2, fixed),
	)
	// A count of elements (Capture.Elem): below max, so no overflow.
	bytes := g.label()
	g.capField(asm.R3, i, capOffElem, asm.Half)
	g.emit(
		asm.JEq.Imm(asm.R3, 0, bytes),
		asm.Mul.Reg(asm.R1, asm.R3),
		asm.JGE.Reg(asm.R1, asm.R2, fixed),
	)
	g.mark(bytes)
	g.emit(asm.Mov.Reg(asm.R2, asm.R1))
	g.mark(fixed)
	g.emit(asm.JLE.Imm(asm.R2, int32(ss.room-8), capped), asm.Mov.Imm(asm.R2, int32(ss.room-8)))
	g.mark(capped)
	g.emit(
		asm.StoreMem(asm.RFP, slotTmp, asm.R2, asm.DWord),
		asm.LoadMem(asm.R1, asm.RFP, sysSlotDst, asm.DWord),
		asm.Add.Imm(asm.R1, 8),
		asm.LoadMem(asm.R3, asm.RFP, sysSlotAddr, asm.DWord),
		asm.FnProbeReadUser.Call(),
		asm.JNE.Imm(asm.R0, 0, sized),
		asm.LoadMem(asm.R0, asm.RFP, slotTmp, asm.DWord),
	)
	g.mark(sized)
	g.emit(
		asm.LoadMem(asm.R1, asm.RFP, sysSlotDst, asm.DWord),
		asm.StoreMem(asm.R1, 0, asm.R0, asm.DWord),
		asm.Ja.Label(next),
	)
}
