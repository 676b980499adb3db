package pad

import (
	"github.com/utap/utap/internal/bytecode"
	"github.com/utap/utap/internal/x86"
	"github.com/utap/utap/probe"
)

// Strings in records. A record holds integers; a fetch of str(addr) puts
// its string in the ring's string area, in the part of it that belongs to
// the record's index: StrSpace bytes per index, StrSub per value, for
// StrRecords indexes after the counters, value by value (value 0 of
// every index, then value 1's...: consecutive records' strings StrSub
// apart, not StrSpace, a new page every 15 records rather than 4: a
// str() trace's tracer 16% less CPU). A pad whose site fetches a
// string reserves only while fewer than StrRecords records are unread
// (room), so the index it gets has its string part to itself: every
// record StrRecords before it has been read, its strings copied out by
// the reader before it freed the slot. Other sites use the whole ring.
// The string is read after the claim, straight into the area, by
// process_vm_readv as bytecode's reads are (a bad address fails the call).
const (
	StrRecords = 4096
	// StrSub is a string's part: probe.MaxStrLen bytes and the one after,
	// which the interpreter's readStr reads too, rounded to 8.
	StrSub   = (probe.MaxStrLen + 1 + 7) &^ 7
	StrSpace = MaxValues * StrSub
	// strShift: a record's site word has bit strShift+i set when value i
	// is a string; the value is then its length, or strNull.
	strShift = 40
	strNull  = ^uint64(0)
)

func strRecords(n int) int { return min(n, StrRecords) }

// StrOff is the offset of the string area in a ring of n records.
func StrOff(n int) int { return CountOff(n, MaxCounted) }

// StrAt is the offset of value v's string of record index i.
func StrAt(n int, i uint64, v int) int {
	return StrOff(n) + v*strRecords(n)*StrSub + int(i&uint64(strRecords(n)-1))*StrSub
}

// Reads says whether a pad of s reads memory (system calls).
func Reads(s Spec) bool { return reads(s) }

// nativeOf is the program a fetch runs in the pad: for str(addr), addr.
func nativeOf(f *bytecode.Program) *bytecode.Program {
	if f == nil {
		return nil
	}
	if q := f.StrAddr(); q != nil {
		return q
	}
	return f
}

// strMask has bit i set for each fetch of s that is a string.
func strMask(s Spec) uint64 {
	var m uint64
	for i, f := range s.Fetches {
		if f != nil && f.StrAddr() != nil { // nil: a value the pad computes itself
			m |= 1 << i
		}
	}
	return m
}

// room is the records a pad of s may have unread when it reserves.
func room(s Spec) int32 {
	if s.Sys != nil {
		records, _, _, _ := sysArea(s)
		return int32(records)
	}
	if strMask(s) != 0 || len(s.Extra) > 0 {
		return int32(strRecords(s.Records))
	}
	return int32(s.Records)
}

// Frame scratch of emitStrs, in the programs' virtual registers (they
// are done by then): the claim's registers, then two iovecs.
const strScratch = 8

func scratch(i int32) x86.Mem {
	return x86.Mem{Base: x86.RBX, Disp: 8 * (bytecode.NativeVRegBase + i)}
}

// emitStrs reads each string fetch's string into the claimed record's
// part of the string area (rcx = the record's index, rdi, rsi, r9 live:
// kept in the frame across the system calls). The value becomes its
// length, strNull for address 0; a failed read sets its fault bit. As
// readStr: the first NUL within MaxStrLen bytes ends it; none there, it
// is cut at MaxStrLen if the byte after was readable, else unreadable.
func emitStrs(a *x86.Asm, s Spec) {
	m := strMask(s)
	if m == 0 {
		return
	}
	saved := []x86.Reg{x86.RCX, x86.RDI, x86.RSI, x86.R9}
	for k, r := range saved {
		a.Store(scratch(int32(k)), r)
	}
	local, remote := scratch(4), scratch(6)
	size := int32(probe.MaxStrLen + 1)
	frame, _ := frameSize(s)
	for i, f := range s.Fetches {
		if m&(1<<i) == 0 {
			continue
		}
		if f.IsBuf() {
			emitBuf(a, s, i, frame, local, remote)
			continue
		}
		val := x86.Mem{Base: x86.RBX, Disp: 8 * int32(slotVals+i)}
		next, null, fault := a.NewLabel(), a.NewLabel(), a.NewLabel()
		a.Load(x86.RAX, val)
		a.RR(x86.TEST, x86.RAX, x86.RAX)
		a.Jcc(x86.E, null)
		a.Store(remote, x86.RAX)
		a.StoreI32(x86.Mem{Base: x86.RBX, Disp: remote.Disp + 8}, size)
		strPlace(a, s, i, local)
		a.StoreI32(x86.Mem{Base: x86.RBX, Disp: local.Disp + 8}, size)
		selfRead(a, local, remote)
		// r13 = the bytes read (0 on an error); rcx = min(r13, MaxStrLen).
		a.MovRR(x86.R13, x86.RAX)
		pos := a.NewLabel()
		a.RR(x86.TEST, x86.R13, x86.R13)
		a.Jcc(x86.GE, pos)
		a.MovRI(x86.R13, 0)
		a.Bind(pos)
		a.MovRI(x86.RCX, probe.MaxStrLen)
		a.RR(x86.CMP, x86.R13, x86.RCX)
		short := a.NewLabel()
		a.Jcc(x86.GE, short)
		a.MovRR(x86.RCX, x86.R13)
		a.Bind(short)
		a.MovRI(x86.RDX, 0)
		loop, found, none := a.NewLabel(), a.NewLabel(), a.NewLabel()
		a.Bind(loop)
		a.RR(x86.CMP, x86.RDX, x86.RCX)
		a.Jcc(x86.AE, none)
		a.Load8(x86.RAX, x86.Mem{Base: x86.R12})
		a.RR(x86.TEST, x86.RAX, x86.RAX)
		a.Jcc(x86.E, found)
		a.RI(x86.ADD, x86.R12, 1)
		a.RI(x86.ADD, x86.RDX, 1)
		a.Jmp(loop)
		a.Bind(none)
		a.RI(x86.CMP, x86.R13, size)
		a.Jcc(x86.L, fault)
		a.Bind(found)
		a.Store(val, x86.RDX)
		a.Jmp(next)
		a.Bind(null)
		a.StoreI32(val, -1) // strNull
		a.Jmp(next)
		a.Bind(fault)
		a.MovRI(x86.RDX, 1)
		faultBit(a, i)
		a.Bind(next)
	}
	for k, r := range saved {
		a.Load(r, scratch(int32(k)))
	}
}

// strPlace points local and r12 at value i's string part of the claimed
// record (its index in scratch(0)). Clobbers rax.
func strPlace(a *x86.Asm, s Spec, i int, local x86.Mem) {
	a.Load(x86.R12, scratch(0))
	strPart(a, s, i, x86.R12, x86.RAX)
	a.Store(local, x86.R12)
}

// strPart turns r, a record's index, into the address of value i's part
// of the string area for it: ring + StrAt(index). Clobbers tmp.
func strPart(a *x86.Asm, s Spec, i int, r, tmp x86.Reg) {
	emitAreaAt(a, r, tmp, strRecords(s.Records), StrSub, s.Ring+uint64(StrAt(s.Records, 0, i)))
}

// emitAreaAt turns r, a record's index, into the address of its part of
// an area of `records` parts of size bytes at base (the string area's,
// the system call areas'): base + (index & (records-1)) * size. Clobbers
// tmp.
func emitAreaAt(a *x86.Asm, r, tmp x86.Reg, records, size int, base uint64) {
	a.RI(x86.AND, r, int32(records-1))
	a.RI(x86.IMUL, r, int32(size))
	a.MovRI(tmp, base)
	a.RR(x86.ADD, r, tmp)
}

// emitBuf reads fetch i's sized string (its address in its value slot,
// its length in bufLenSlot) as the interpreter's buf does: min(length,
// MaxStrLen) bytes, NULs included, unreadable unless all were read; the
// value becomes the bytes read. Clobbers what emitStrs may.
func emitBuf(a *x86.Asm, s Spec, i int, frame int32, local, remote x86.Mem) {
	val := x86.Mem{Base: x86.RBX, Disp: 8 * int32(slotVals+i)}
	ok, next := a.NewLabel(), a.NewLabel()
	a.Load(x86.RAX, val)
	notNull := a.NewLabel()
	a.RR(x86.TEST, x86.RAX, x86.RAX)
	a.Jcc(x86.NE, notNull)
	a.StoreI32(val, -1) // strNull: NULL, as a string's
	a.Jmp(next)
	a.Bind(notNull)
	a.Store(remote, x86.RAX)
	short := a.NewLabel()
	a.Load(x86.RCX, bufLenSlot(frame, i))
	a.MovRI(x86.RAX, probe.MaxStrLen)
	a.RR(x86.CMP, x86.RCX, x86.RAX)
	a.Jcc(x86.BE, short) // unsigned: a negative length is a huge one, as r[b] is
	a.MovRR(x86.RCX, x86.RAX)
	a.Bind(short)
	a.MovRR(x86.RAX, x86.RCX)
	a.RR(x86.TEST, x86.RCX, x86.RCX)
	a.Jcc(x86.E, ok) // nothing to read: "", where a read of none says EFAULT
	a.Store(x86.Mem{Base: x86.RBX, Disp: remote.Disp + 8}, x86.RCX)
	a.Store(x86.Mem{Base: x86.RBX, Disp: local.Disp + 8}, x86.RCX)
	strPlace(a, s, i, local)
	bytecode.SelfRead(a, local, remote, false)
	a.Load(x86.RCX, x86.Mem{Base: x86.RBX, Disp: remote.Disp + 8})
	a.RR(x86.CMP, x86.RAX, x86.RCX)
	a.Jcc(x86.E, ok)
	a.MovRI(x86.RDX, 1)
	faultBit(a, i)
	a.Jmp(next)
	a.Bind(ok)
	a.Store(val, x86.RAX)
	a.Bind(next)
}

// selfRead is bytecode's read of the process's own memory, the pid
// cached in the frame as bytecode's reads cache it; rax is the result.
func selfRead(a *x86.Asm, local, remote x86.Mem) { bytecode.SelfRead(a, local, remote, true) }

// emitAlive points the frame's NativeAliveSlot at the tracer's liveness
// word, unless the site's loads faulted before (OffFaulted) or it has no
// bit: 0 makes the reads system calls. Clobbers rax, rcx.
func emitAlive(a *x86.Asm, s Spec) {
	set := a.NewLabel()
	a.MovRI(x86.RCX, 0)
	if s.Ring != 0 && int(s.ID) < MaxCounted {
		a.MovRI(x86.RAX, s.Ring+OffFaulted+uint64(s.ID/8))
		a.Load8(x86.RAX, x86.Mem{Base: x86.RAX})
		a.RI(x86.AND, x86.RAX, 1<<(s.ID%8))
		a.Jcc(x86.NE, set)
		a.MovRI(x86.RCX, s.Ring+OffTracer)
	}
	a.Bind(set)
	a.Store(x86.Mem{Base: x86.RBX, Disp: 8 * bytecode.NativeAliveSlot}, x86.RCX)
}

// SetFaulted marks site id's loads as faulting (OffFaulted) in the ring
// mapped at view.
func SetFaulted(view []byte, id uint32) {
	if int(id) < MaxCounted && len(view) > OffFaulted+MaxCounted/8 {
		view[OffFaulted+id/8] |= 1 << (id % 8)
	}
}
