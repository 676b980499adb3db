//go:build linux && amd64

package uprobe

import (
	"encoding/binary"
	"math"

	"github.com/cilium/ebpf/asm"
	"github.com/utap/utap/internal/syscalls"
)

// The longer capture readers: string arrays (execve's argv, envp's count)
// and iovec arrays. Each produces, with the user-space side below, the
// bytes syscalls.Read gives, within the limits documented here.

const (
	// sysMaxArgv bounds the strings of an argv read (the bytes are
	// bounded by the capture's max, 4096, as syscalls.Read's): an argv of
	// more, shorter strings ends as if cut at the byte cap ("...").
	sysMaxArgv = 256
	// sysMaxEnv bounds the strings counted of a CountOnly array (envp's
	// "/* N vars */"); syscalls.Read counts up to its max, 32768.
	sysMaxEnv = 1024
	// sysIovBudget bounds an iovec capture's slot: with a large -s fewer
	// elements than syscalls.MaxIovElems are read (iovElems).
	sysIovBudget = 8192
	sysSlotCur   = -64 // bytes of an array read so far
	sysSlotLeft  = -72 // readv: bytes the return value leaves, <0: no limit
	sysSlotCount = -80 // iovec elements to read
)

func (k capKind) array() bool { return k == capStrArray || k == capStrCount }

// iovElems is how many iovec elements are read, each in a sub-slot of
// iovSub bytes: the 16-byte iovec, the count n, and iovLim bytes.
func (ss *sysSpec) iovElems() int {
	return max(1, min(syscalls.MaxIovElems, sysIovBudget/ss.iovSub()))
}

// iovLim is the bytes read of one iovec element: MaxFor of an Iov capture,
// at most an eighth of the budget, so that a large -s (or a dump's, -e
// read=) still reads 8 elements.
func (ss *sysSpec) iovLim() int { return min(ss.strLen+1, sysIovBudget/8) }
func (ss *sysSpec) iovSub() int { return 24 + align8(ss.iovLim()) }

// setResult stores r into the capture slot's result and jumps to next.
func setResult(g *progGen, r asm.Register, next string) {
	g.emit(
		asm.LoadMem(asm.R1, asm.RFP, sysSlotDst, asm.DWord),
		asm.StoreMem(asm.R1, 0, r, asm.DWord),
		asm.Ja.Label(next),
	)
}

// readPtr reads the R7th pointer of the array at sysSlotAddr into slotTmp;
// R0 is the helper's result.
func readPtr(g *progGen) {
	g.emit(
		asm.LoadMem(asm.R3, asm.RFP, sysSlotAddr, asm.DWord),
		asm.Mov.Reg(asm.R1, asm.R7),
		asm.LSh.Imm(asm.R1, 3),
		asm.Add.Reg(asm.R3, asm.R1),
		asm.Mov.Reg(asm.R1, asm.RFP),
		asm.Add.Imm(asm.R1, slotTmp),
		asm.Mov.Imm(asm.R2, 8),
		asm.FnProbeReadUser.Call(),
	)
}

// readStrArray reads an array of string pointers as syscalls.Read does:
// the strings joined, each NUL-terminated, at most lim bytes (one more
// when the last is cut), and a final NUL when a NULL pointer ended the
// array within them. A loop (R7: the string) the verifier walks to
// sysMaxArgv; the slot's result is the bytes.
func (ss *sysSpec) readStrArray(g *progGen, next string) {
	lim := int32(ss.arrLim)
	loop, fin, got, nul, str, added := g.label(), g.label(), g.label(), g.label(), g.label(), g.label()
	g.emit(
		asm.Mov.Imm(asm.R7, 0),
		storeImm64(asm.RFP, sysSlotCur, 0),
	)
	g.mark(loop)
	g.emit(
		asm.LoadMem(asm.R1, asm.RFP, sysSlotCur, asm.DWord),
		asm.JGE.Imm(asm.R1, lim, fin),
	)
	readPtr(g)
	g.emit(
		asm.JNE.Imm(asm.R0, 0, fin),
		asm.LoadMem(asm.R3, asm.RFP, slotTmp, asm.DWord),
		asm.JNE.Imm(asm.R3, 0, str),
		asm.Mov.Imm(asm.R7, sysMaxArgv), // the end: one NUL, then stop
		asm.Ja.Label(nul),
	)
	g.mark(str)
	g.emit(
		asm.LoadMem(asm.R2, asm.RFP, sysSlotCur, asm.DWord),
		asm.JGE.Imm(asm.R2, lim, fin),
		asm.LoadMem(asm.R1, asm.RFP, sysSlotDst, asm.DWord),
		asm.Add.Imm(asm.R1, 8),
		asm.Add.Reg(asm.R1, asm.R2),
		// One byte past what is left: a string cut there comes with its
		// NUL, as Read adds one.
		asm.Mov.Imm(asm.R4, lim+1),
		asm.Sub.Reg(asm.R4, asm.R2),
		asm.Mov.Reg(asm.R2, asm.R4),
		asm.FnProbeReadUserStr.Call(),
		asm.JSGT.Imm(asm.R0, 0, got),
	)
	g.mark(nul) // unreadable or empty: a lone NUL
	g.emit(
		asm.LoadMem(asm.R2, asm.RFP, sysSlotCur, asm.DWord),
		asm.JGE.Imm(asm.R2, lim, fin),
		asm.LoadMem(asm.R1, asm.RFP, sysSlotDst, asm.DWord),
		asm.Add.Reg(asm.R1, asm.R2),
		asm.StoreImm(asm.R1, 8, 0, asm.Byte),
		asm.Mov.Imm(asm.R0, 1),
	)
	g.mark(got)
	g.emit(
		asm.JLE.Imm(asm.R0, lim+1, added),
		asm.Mov.Imm(asm.R0, lim+1),
	)
	g.mark(added)
	g.emit(
		asm.LoadMem(asm.R1, asm.RFP, sysSlotCur, asm.DWord),
		asm.Add.Reg(asm.R1, asm.R0),
		asm.StoreMem(asm.RFP, sysSlotCur, asm.R1, asm.DWord),
		asm.Add.Imm(asm.R7, 1),
		asm.JLT.Imm(asm.R7, sysMaxArgv, loop),
	)
	g.mark(fin)
	g.emit(asm.LoadMem(asm.R0, asm.RFP, sysSlotCur, asm.DWord))
	setResult(g, asm.R0, next)
}

// countStrArray counts the strings of an array (CountOnly): the result
// is the count, with sysArrayEnded when a NULL pointer ended it, or
// -EFAULT when the array is unreadable; user space stores each string as
// a lone NUL, as syscalls.Read does.
func (ss *sysSpec) countStrArray(g *progGen, next string) {
	loop, fin, failed, ended := g.label(), g.label(), g.label(), g.label()
	g.emit(asm.Mov.Imm(asm.R7, 0))
	g.mark(loop)
	readPtr(g)
	g.emit(
		asm.JNE.Imm(asm.R0, 0, failed),
		asm.LoadMem(asm.R3, asm.RFP, slotTmp, asm.DWord),
		asm.JEq.Imm(asm.R3, 0, ended),
		asm.Add.Imm(asm.R7, 1),
		asm.JLT.Imm(asm.R7, sysMaxEnv, loop),
		asm.Ja.Label(fin),
	)
	g.mark(failed)
	g.emit(asm.JNE.Imm(asm.R7, 0, fin), asm.Mov.Imm(asm.R7, -14)) // -EFAULT
	g.emit(asm.Ja.Label(fin))
	g.mark(ended)
	g.emit(
		asm.LoadImm(asm.R1, sysArrayEnded, asm.DWord),
		asm.Or.Reg(asm.R7, asm.R1),
	)
	g.mark(fin)
	setResult(g, asm.R7, next)
}

// readIov reads capture i, an iovec array, into sub-slots: the iovec,
// n, then n bytes; the result is the elements read. The count is the
// length argument's, at most iovElems; each n at most iovLim and, for
// readv, what the return value leaves. An element's bytes unreadable at
// entry fail the capture (read again at exit); at exit its n is
// syscalls.IovUnread.
func (ss *sysSpec) readIov(g *progGen, i int, next string, exit bool) {
	n, sub, lim := ss.iovElems(), ss.iovSub(), int32(ss.iovLim())
	counted, limited, positive, unlimited := g.label(), g.label(), g.label(), g.label()
	g.capField(asm.R1, i, capOffLen, asm.Half)
	g.emit(
		asm.JGT.Imm(asm.R1, regDI, next),
		asm.Add.Reg(asm.R1, asm.R6),
		asm.LoadMem(asm.R1, asm.R1, 0, asm.DWord),
		asm.JLE.Imm(asm.R1, int32(n), counted),
		asm.Mov.Imm(asm.R1, int32(n)),
	)
	g.mark(counted)
	g.emit(
		asm.StoreMem(asm.RFP, sysSlotCount, asm.R1, asm.DWord),
		storeImm64(asm.RFP, sysSlotLeft, -1),
	)
	g.capField(asm.R1, i, capOffFlags, asm.Byte)
	g.emit(
		asm.JSet.Imm(asm.R1, capLeftRet, limited),
		asm.Ja.Label(unlimited),
	)
	g.mark(limited)
	g.emit(
		asm.LoadMem(asm.R1, asm.R6, regAX, asm.DWord),
		asm.JSGE.Imm(asm.R1, 0, positive),
		asm.Mov.Imm(asm.R1, 0),
	)
	g.mark(positive)
	g.emit(asm.StoreMem(asm.RFP, sysSlotLeft, asm.R1, asm.DWord))
	g.mark(unlimited)
	for j := range n {
		base := int16(8 + j*sub)
		stop, data, cont, fits, within := g.label(), g.label(), g.label(), g.label(), g.label()
		g.emit(
			asm.LoadMem(asm.R1, asm.RFP, sysSlotCount, asm.DWord),
			asm.JLE.Imm(asm.R1, int32(j), stop),
			asm.LoadMem(asm.R1, asm.RFP, sysSlotDst, asm.DWord),
			asm.Add.Imm(asm.R1, int32(base)),
			asm.Mov.Imm(asm.R2, 16),
			asm.LoadMem(asm.R3, asm.RFP, sysSlotAddr, asm.DWord),
			asm.Add.Imm(asm.R3, int32(16*j)),
			asm.FnProbeReadUser.Call(),
			asm.JNE.Imm(asm.R0, 0, stop),
			asm.LoadMem(asm.R1, asm.RFP, sysSlotDst, asm.DWord),
			asm.LoadMem(asm.R2, asm.R1, base+8, asm.DWord), // iov_len
			asm.JLE.Imm(asm.R2, lim, fits),
			asm.Mov.Imm(asm.R2, lim),
		)
		g.mark(fits)
		g.emit(
			asm.LoadMem(asm.R4, asm.RFP, sysSlotLeft, asm.DWord),
			asm.JSLT.Imm(asm.R4, 0, data),
			asm.JLE.Reg(asm.R2, asm.R4, within),
			asm.Mov.Reg(asm.R2, asm.R4),
		)
		g.mark(within)
		g.emit(
			asm.Sub.Reg(asm.R4, asm.R2),
			asm.StoreMem(asm.RFP, sysSlotLeft, asm.R4, asm.DWord),
		)
		g.mark(data)
		g.emit(
			asm.JGT.Imm(asm.R2, lim, stop), // never: bounds R2 for the verifier
			asm.StoreMem(asm.R1, base+16, asm.R2, asm.DWord),
			asm.JEq.Imm(asm.R2, 0, cont),
			asm.LoadMem(asm.R3, asm.R1, base, asm.DWord), // iov_base
			asm.Add.Imm(asm.R1, int32(base+24)),
			asm.FnProbeReadUser.Call(),
			asm.JEq.Imm(asm.R0, 0, cont),
		)
		if exit {
			// Unreadable at exit too: a bad address (strace shows it).
			g.emit(
				asm.LoadMem(asm.R1, asm.RFP, sysSlotDst, asm.DWord),
				asm.LoadImm(asm.R2, math.MinInt64, asm.DWord), // syscalls.IovUnread
				asm.StoreMem(asm.R1, base+16, asm.R2, asm.DWord),
				asm.Ja.Label(cont),
			)
		} else {
			// Unreadable data (a page not touched yet, as a string
			// literal's in writev at entry): the capture fails, so the
			// exit, by when the kernel has faulted the page in, reads
			// it again.
			g.emit(asm.Mov.Imm(asm.R0, -14)) // -EFAULT
			setResult(g, asm.R0, next)
		}
		g.mark(stop)
		g.emit(asm.Mov.Imm(asm.R0, int32(j)))
		setResult(g, asm.R0, next)
		g.mark(cont)
		g.emit(asm.Mov.Reg(asm.R0, asm.R0))
	}
	g.emit(asm.Mov.Imm(asm.R0, int32(n)))
	setResult(g, asm.R0, next)
}

// arrayBytes is an array capture's bytes from its slot's result r and
// data.
func (ss *sysSpec) arrayBytes(c sysCap, r int64, data []byte) []byte {
	switch c.kind {
	case capStrArray:
		if r == 0 {
			return nil // as Read: nothing read
		}
		return clone(data[:min(int(r), len(data))])
	case capStrCount:
		n := int(uint32(r))
		if r&sysArrayEnded != 0 {
			n++
		}
		return make([]byte, min(n, c.max))
	}
	// capIov: compacted to Capture.Iov's layout.
	le := binary.LittleEndian
	var b []byte
	sub := ss.iovSub()
	for j := 0; j < int(r) && (j+1)*sub <= len(data); j++ {
		e := data[j*sub:]
		b = append(b, e[:24]...)
		if le.Uint64(e[16:]) == syscalls.IovUnread {
			continue
		}
		n := min(int(le.Uint64(e[16:])), ss.iovLim())
		binary.LittleEndian.PutUint64(b[len(b)-8:], uint64(n))
		b = append(b, e[24:24+n]...)
	}
	return b
}
