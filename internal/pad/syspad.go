package pad

import (
	"encoding/binary"
	"fmt"

	"github.com/utap/utap/internal/bytecode"
	"github.com/utap/utap/internal/x86"
)

// System call pads (ptrace/padsys.go). A site's pad runs the displaced
// instructions, then `syscall` with every register as the original code
// would have had it, then (below the red zone, as every pad) writes a
// record of kind KindSys and restores every register: rax the result,
// rcx as the kernel sets it for the original `syscall` (its next
// address), r11 the kernel's; it then jumps to the original's next
// instruction. The record's values are in one of the ring's two system
// call areas after the strings, as strs.go's area (a pad reserves only
// while fewer records than its area's indexes are unread): SysSpace bytes
// per index for SysRecords indexes; or, for a call whose values fit in
// sysSmallSpace (most: no path, a buffer cut at -s), the small area's
// sysSmallRecords indexes, a record kind of its own (KindSysSmall). One
// area of 1,024 held a third of a millisecond of getppid calls: the pads
// waited for the reader at every pause of its (a millisecond between
// small batches), and the program ran half the time.
//
//	0   the six arguments (rdi rsi rdx r10 r8 r9: the call keeps them)
//	48  the result
//	56  the bytes used
//	64  the call's duration in TSC ticks: the TSC just after it minus
//	    the TSC just before (startTSC)
//	72  the captures, each a word (-1: none, else the bytes read) and
//	    its room (SysCap.Max, rounded up to 8)
const (
	KindSys      = 2
	KindSysSmall = 3
	SysSpace     = 16384
	SysRecords   = 1024
	SysHead      = 72
	// SysTicksOff is the offset of the call's duration in TSC ticks.
	SysTicksOff = 64
	// The small area: sysSmallSpace bytes per index, for sysSmallRecords.
	sysSmallSpace   = 512
	sysSmallRecords = 8192
)

// sysStartSlot and sysRdxSlot are below the red zone, above the frame
// the record's code uses: the TSC before the call, rdx while rdtsc runs.
const (
	sysStartSlot = -(redZone + 16)
	sysRdxSlot   = -(redZone + 8)
)

// SysOff is the offset of the system call area in a ring of n records.
func SysOff(n int) int { return StrOff(n) + strRecords(n)*StrSpace }

func sysRecords(n int) int { return min(n, SysRecords) }

// smallOff is the offset of the small system call area.
func smallOff(n int) int { return SysOff(n) + sysRecords(n)*SysSpace }

func smallRecords(n int) int { return min(n, sysSmallRecords) }

// SysAt is the offset of record index i's system call values, in the
// small area or the other.
func SysAt(n int, i uint64, small bool) int {
	if small {
		return smallOff(n) + int(i&uint64(smallRecords(n)-1))*sysSmallSpace
	}
	return SysOff(n) + int(i&uint64(sysRecords(n)-1))*SysSpace
}

// sysArea is the area a pad of s writes its values in: the indexes it
// may have unread (room), the bytes of each, where it starts, and its
// record kind.
func sysArea(s Spec) (records, space, off int, kind uint8) {
	if _, used, _ := SysLayout(s.Sys.Caps); used <= sysSmallSpace {
		return smallRecords(s.Records), sysSmallSpace, smallOff(s.Records), KindSysSmall
	}
	return sysRecords(s.Records), SysSpace, SysOff(s.Records), KindSys
}

// SysCap is one capture (syscalls.Capture) as the pad reads it, after the
// call: Exit ones only when the result is not negative.
type SysCap struct {
	Arg  int
	Exit bool
	// Str: a NUL-terminated string of at most Max bytes; else Size bytes,
	// or LenArg's argument (LenArg >= 0) or the result's (LenRet), times
	// Elem when not 0, at most Max.
	Str    bool
	Size   int
	LenArg int
	LenRet bool
	Elem   int
	Max    int
	// Iov: an iovec array (syscalls.Capture.Iov) of LenArg's argument
	// elements, at most sysIovElems, each copied as the stop path reads
	// it: the iovec, the bytes taken, at most IovLim of them and, with
	// LenRet, of the result's bytes left. Max is then the whole room.
	Iov    bool
	IovLim int
	// Msg: a msghdr (syscalls.Capture.Msg), read as the stop path reads
	// it (syspadmsg.go), its elements at most IovLim bytes each; Max is
	// the whole room (MsgRoom).
	Msg bool
	// Indirect: Size bytes at the pointer found at the argument plus Off
	// (syscalls.Capture.Indirect: pselect6's sigset); Max at least 8.
	Indirect bool
	Off      int
	// DirentCount: not bytes but the count of the linux_dirent64 records
	// the call returned in the buffer Arg points to (8 bytes: a getdents
	// buffer may hold more than its capture, syscalls.WithDirents).
	DirentCount bool
	// Same, when not 0, is 1 + the index of an earlier capture of the
	// same bytes (poll's fds, read once for the arguments and once for
	// revents): the pad reads nothing for it, the tracer takes that one's.
	Same int
	// Before: read before the call, which may change the bytes (ioctl's
	// argument, select's sets, accept's [in => out] length): into the
	// stack below the pad's frame (beforeLayout), then copied into the
	// record after the call.
	Before bool
}

// room is the bytes c takes in an area: its word, then Max bytes,
// 8-aligned.
func (c SysCap) room() int { return 8 + (c.Max+7)&^7 }

// MaxBefore bounds the bytes a pad reads before its call (SysCap.Before),
// on the thread's stack below its frame: select's three sets and its
// timeout take 432.
const MaxBefore = 1024

// BeforeLayout gives each Before capture's offset in the stack area the
// pad reads them into (the others -1) and the area's bytes: a word and
// the bytes, as SysLayout's.
func BeforeLayout(caps []SysCap) (offs []int, size int) {
	for _, c := range caps {
		if !c.Before || c.Same > 0 {
			offs = append(offs, -1)
			continue
		}
		offs = append(offs, size)
		size += c.room()
	}
	return offs, size
}

// sysIovElems is the iovec elements a capture holds
// (syscalls.MaxIovElems).
const sysIovElems = 64

// IovRoom is the room of an iovec capture of at most lim bytes per
// element (SysCap.Max).
func IovRoom(lim int) int { return sysIovElems * (24 + lim) }

// SysSpec is what a system call pad needs beyond Spec's ring and id.
type SysSpec struct {
	Caps []SysCap
	// Back is the address after the original `syscall`: where the pad
	// returns and what rcx holds after it.
	Back uint64
	// Nr is the call's number, which eax holds at the `syscall`.
	Nr int
}

// SysLayout gives each capture's offset in the area and the bytes used;
// ok is false when they do not fit.
func SysLayout(caps []SysCap) (offs []int, used int, ok bool) {
	used = SysHead
	for _, c := range caps {
		offs = append(offs, used)
		used += c.room()
	}
	return offs, used, used <= SysSpace
}

// SysParts is where a system call pad's parts are: startTSC's code
// (after the displaced instructions), its `syscall`.
type SysParts struct {
	TSC, Syscall int
	// Fixups: the captures' loads that may fault, and their fix-ups.
	Fixups []Fixup
}

// MaxSysSize bounds a system call pad's bytes, four entry pads'.
const MaxSysSize = 4 * MaxSize

// SysRdxSlot is where, below rsp, startTSC keeps rdx while rdtsc runs: a
// thread stopped in that code has it back from there.
const SysRdxSlot = sysRdxSlot

// BuildSys returns the system call pad of s (s.Sys set, s.Displaced the
// relocated instructions with no jump back) assembled to run at `at`.
func BuildSys(s Spec, at uint64) ([]byte, SysParts, error) {
	var parts SysParts
	if s.Sys == nil {
		return nil, parts, fmt.Errorf("pad: not a system call pad")
	}
	if _, _, ok := SysLayout(s.Sys.Caps); !ok {
		return nil, parts, fmt.Errorf("pad: the call's captures need more than %d bytes", SysSpace)
	}
	code, err := s.Displaced(at)
	if err != nil {
		return nil, parts, err
	}
	// part appends a part's code, its fix-ups moved to where it lands.
	part := func(c []byte, fixups []Fixup, err error) error {
		for _, f := range fixups {
			parts.Fixups = append(parts.Fixups, Fixup{At: len(code) + f.At, To: len(code) + f.To})
		}
		code = append(code, c...)
		return err
	}
	if _, size := BeforeLayout(s.Sys.Caps); size > 0 {
		if err := part(sysBeforeCode(s)); err != nil {
			return nil, parts, err
		}
	}
	parts.TSC = len(code)
	code = append(code, startTSC(s.Sys.Nr)...)
	parts.Syscall = len(code)
	code = append(code, 0x0f, 0x05)
	if err := part(sysCode(s)); err != nil {
		return nil, parts, err
	}
	// The gate packs system call pads by their length (ptrace's take):
	// the bound is one pad's (a writev's with the terminal's wait, 2,191
	// bytes, stopped under MaxSize; pselect6's ten captures take 4.9 KiB).
	if len(code) > MaxSysSize {
		return nil, parts, fmt.Errorf("pad: %d bytes, at most %d", len(code), MaxSysSize)
	}
	return code, parts, nil
}

// startTSC is the code just before the pad's `syscall`: the TSC stored
// below the red zone (sysStartSlot) for the call's duration, every
// register and flag as it was (rdx saved around rdtsc, eax the number
// again: only mov and rdtsc, which leave the flags alone).
func startTSC(nr int) []byte {
	le := binary.LittleEndian
	d32 := func(b []byte, d int32) []byte { return le.AppendUint32(b, uint32(d)) }
	var b []byte
	b = d32(append(b, 0x48, 0x89, 0x94, 0x24), sysRdxSlot) // mov %rdx,rdx(%rsp)
	b = append(b, 0x0f, 0x31)                              // rdtsc
	b = d32(append(b, 0x89, 0x84, 0x24), sysStartSlot)     // mov %eax,start(%rsp)
	b = d32(append(b, 0x89, 0x94, 0x24), sysStartSlot+4)   // mov %edx,start+4(%rsp)
	b = d32(append(b, 0x48, 0x8b, 0x94, 0x24), sysRdxSlot) // mov rdx(%rsp),%rdx
	return le.AppendUint32(append(b, 0xb8), uint32(nr))    // mov $nr,%eax
}

// sysCode is the pad after its `syscall`: the record, the registers
// restored, rcx as the original's, the jump back; and the exception
// table of its captures' loads, offsets in that code.
func sysCode(s Spec) ([]byte, []Fixup, error) {
	a, frame, down, err := sysFrame(s)
	if err != nil {
		return nil, nil, err
	}
	// The TSC just after the call, before anything can wait (a full
	// ring): kept where startTSC kept rdx.
	a.Raw(0x0f, 0x31) // rdtsc
	a.RI(x86.SHL, x86.RDX, 32)
	a.RR(x86.OR, x86.RAX, x86.RDX)
	a.Store(x86.Mem{Base: x86.RBX, Disp: startWords(s, frame) + 8}, x86.RAX)
	emitReadFrame(a, s)
	done := a.NewLabel()
	emitRecord(a, s, done)
	a.Bind(done)
	restoreRegs(a, down, allRegs)
	a.MovRI(x86.RCX, s.Sys.Back)
	code, err := a.Assemble()
	if err != nil {
		return nil, nil, err
	}
	fixups := fixupsOf(a)
	code = AbsJmp(code, s.Sys.Back)
	return code, fixups, nil
}

// sysArgRegs are the call's arguments, in order.
var sysArgRegs = [6]x86.Reg{x86.RDI, x86.RSI, x86.RDX, x86.R10, x86.R8, x86.R9}

func frameReg(r x86.Reg) x86.Mem { return x86.Mem{Base: x86.RBX, Disp: 8 * int32(r)} }

// emitSys fills the claimed record's system call area (emitRecord: rcx
// the index, rdi the record, rsi the ring, r9 live: kept across the
// reads' system calls).
func emitSys(a *x86.Asm, s Spec) {
	if s.Sys == nil {
		return
	}
	saved := []x86.Reg{x86.RCX, x86.RDI, x86.RSI, x86.R9}
	for k, r := range saved {
		a.Store(scratch(int32(k)), r)
	}
	// r12 = the area: ring + SysAt(index).
	records, space, off, _ := sysArea(s)
	a.MovRR(x86.R12, x86.RCX)
	emitAreaAt(a, x86.R12, x86.RAX, records, space, s.Ring+uint64(off))
	area := func(off int) x86.Mem { return x86.Mem{Base: x86.R12, Disp: int32(off)} }
	for i, r := range sysArgRegs {
		a.Load(x86.RAX, frameReg(r))
		a.Store(area(8*i), x86.RAX)
	}
	a.Load(x86.RAX, frameReg(x86.RAX))
	a.Store(area(48), x86.RAX)
	// The TSC after the call minus the TSC before, just above the frame
	// (sysCode's: startTSC's words).
	frame, _ := frameSize(s)
	a.Load(x86.RAX, x86.Mem{Base: x86.RBX, Disp: startWords(s, frame) + 8})
	a.Load(x86.RDX, x86.Mem{Base: x86.RBX, Disp: startWords(s, frame)})
	a.RR(x86.SUB, x86.RAX, x86.RDX)
	a.Store(area(SysTicksOff), x86.RAX)
	offs, used, _ := SysLayout(s.Sys.Caps)
	a.StoreI32(area(56), int32(used))
	boffs, _ := BeforeLayout(s.Sys.Caps)
	for k, c := range s.Sys.Caps {
		if boffs[k] >= 0 {
			emitCopy(a, x86.Mem{Base: x86.RBX, Disp: frame + int32(boffs[k])}, x86.Mem{Base: x86.R12, Disp: int32(offs[k])}, c.room())
			continue
		}
		emitCap(a, c, offs[k])
	}
	if n := lastRead(s.Sys.Caps); n > 0 {
		// The bytes used end with the last capture's bytes read, not its
		// room (an iovec array's 3.6 KiB, a path's 4 KiB, which the
		// reader copied out of the ring at every call).
		last := offs[n-1]
		none := a.NewLabel()
		a.MovRI(x86.RDX, uint64(last+8))
		a.Load(x86.RAX, area(last)) // -1: none read
		a.RR(x86.TEST, x86.RAX, x86.RAX)
		a.Jcc(x86.S, none)
		a.RR(x86.ADD, x86.RDX, x86.RAX)
		a.Bind(none)
		a.Store(area(56), x86.RDX)
	}
	for k, r := range saved {
		a.Load(r, scratch(int32(k)))
	}
}

// lastRead is 1 + the index of the last capture the pad reads (not
// Same), 0 if none.
func lastRead(caps []SysCap) int {
	for n := len(caps); n > 0; n-- {
		if caps[n-1].Same == 0 {
			return n
		}
	}
	return 0
}

// emitCap reads one capture into its place at r12+off: the word, then
// the bytes. Clobbers everything but rbx, r12.
func emitCap(a *x86.Asm, c SysCap, off int) {
	switch {
	case c.Same > 0:
		a.StoreI32(x86.Mem{Base: x86.R12, Disp: int32(off)}, -1)
		return
	case c.Iov:
		emitIov(a, c, off)
		return
	case c.Msg:
		emitMsg(a, c, off)
		return
	case c.DirentCount:
		emitDirentCount(a, c, off)
		return
	case c.Indirect:
		emitIndirect(a, c, off)
		return
	}
	word := x86.Mem{Base: x86.R12, Disp: int32(off)}
	local, remote := scratch(4), scratch(6)
	next := a.NewLabel()
	capStart(a, c, word, next)
	a.Store(remote, x86.RAX)
	// rdx = the bytes to read.
	switch {
	case c.Str:
		a.MovRI(x86.RDX, uint64(c.Max))
	case c.Size > 0:
		a.MovRI(x86.RDX, uint64(min(c.Size, c.Max)))
	default:
		if c.LenRet {
			a.Load(x86.RDX, frameReg(x86.RAX))
			pos := a.NewLabel()
			a.RR(x86.TEST, x86.RDX, x86.RDX)
			a.Jcc(x86.GE, pos)
			a.MovRI(x86.RDX, 0)
			a.Bind(pos)
		} else {
			a.Load(x86.RDX, frameReg(sysArgRegs[c.LenArg]))
		}
		limit := uint64(c.Max)
		if c.Elem > 0 {
			limit = uint64(c.Max / c.Elem)
		}
		// Unsigned min with the limit, then times Elem.
		minU(a, x86.RDX, limit)
		if c.Elem > 0 {
			a.RI(x86.IMUL, x86.RDX, int32(c.Elem))
		}
		nonzero := a.NewLabel()
		a.RR(x86.TEST, x86.RDX, x86.RDX)
		a.Jcc(x86.NE, nonzero)
		a.Store(word, x86.RDX) // nothing to read: empty
		a.Jmp(next)
		a.Bind(nonzero)
	}
	a.Store(x86.Mem{Base: x86.RBX, Disp: remote.Disp + 8}, x86.RDX)
	a.Store(x86.Mem{Base: x86.RBX, Disp: local.Disp + 8}, x86.RDX)
	a.Lea(x86.RAX, x86.Mem{Base: x86.R12, Disp: int32(off + 8)})
	a.Store(local, x86.RAX)
	// r13 = the bytes wanted, across the read.
	a.MovRR(x86.R13, x86.RDX)
	bytecode.SelfRead(a, local, remote, c.Str)
	if !c.Str {
		// All or nothing, as syscalls.Read.
		a.RR(x86.CMP, x86.RAX, x86.R13)
		a.Jcc(x86.NE, next)
		a.Store(word, x86.RAX)
		a.Jmp(next)
		a.Bind(next)
		return
	}
	// A string: up to its NUL included, else what was read (a page
	// that could not be read ends it, as readStr); nothing read: none.
	a.RR(x86.TEST, x86.RAX, x86.RAX)
	a.Jcc(x86.LE, next)
	a.Lea(x86.RSI, x86.Mem{Base: x86.R12, Disp: int32(off + 8)})
	a.MovRI(x86.RDX, 0)
	loop, found, none := a.NewLabel(), a.NewLabel(), a.NewLabel()
	a.Bind(loop)
	a.RR(x86.CMP, x86.RDX, x86.RAX)
	a.Jcc(x86.AE, none)
	a.Load8(x86.RCX, x86.Mem{Base: x86.RSI})
	a.RI(x86.ADD, x86.RSI, 1)
	a.RI(x86.ADD, x86.RDX, 1)
	a.RR(x86.TEST, x86.RCX, x86.RCX)
	a.Jcc(x86.E, found)
	a.Jmp(loop)
	a.Bind(found)
	a.Store(word, x86.RDX)
	a.Jmp(next)
	a.Bind(none)
	a.Store(word, x86.RAX)
	a.Bind(next)
}

// capStart begins capture c, whose word is at word: -1 (none) until
// read; to next when the call failed (an exit capture) or the argument
// is NULL. rax is then the argument.
func capStart(a *x86.Asm, c SysCap, word x86.Mem, next x86.Label) {
	a.StoreI32(word, -1)
	if c.Exit {
		a.Load(x86.RAX, frameReg(x86.RAX))
		a.RR(x86.TEST, x86.RAX, x86.RAX)
		a.Jcc(x86.L, next)
	}
	a.Load(x86.RAX, frameReg(sysArgRegs[c.Arg]))
	a.RR(x86.TEST, x86.RAX, x86.RAX)
	a.Jcc(x86.E, next)
}

// emitReadAll reads n bytes at rax (the process's memory) to to, and
// goes to fail unless it read them all. Clobbers everything but rbx and
// r12–r15 (SelfRead's).
func emitReadAll(a *x86.Asm, to x86.Mem, n int32, fail x86.Label) {
	local, remote := scratch(4), scratch(6)
	a.Store(remote, x86.RAX)
	a.StoreI32(x86.Mem{Base: x86.RBX, Disp: remote.Disp + 8}, n)
	a.Lea(x86.RAX, to)
	a.Store(local, x86.RAX)
	a.StoreI32(x86.Mem{Base: x86.RBX, Disp: local.Disp + 8}, n)
	bytecode.SelfRead(a, local, remote, false)
	a.RI(x86.CMP, x86.RAX, n)
	a.Jcc(x86.NE, fail)
}

// minU makes r the unsigned minimum of r and limit; clobbers rcx.
func minU(a *x86.Asm, r x86.Reg, limit uint64) {
	a.MovRI(x86.RCX, limit)
	short := a.NewLabel()
	a.RR(x86.CMP, r, x86.RCX)
	a.Jcc(x86.B, short)
	a.MovRR(r, x86.RCX)
	a.Bind(short)
}

// readSys copies record index i's system call area out of the ring
// before its slot is freed.
func (r *Ring) readSys(i uint64, rec *Record) {
	small := rec.Kind == KindSysSmall
	at := SysAt(int(r.n), i, small)
	used := int(*r.word(at + 56))
	if used < SysHead || used > SysSpace || small && used > sysSmallSpace {
		used = SysHead
	}
	rec.Sys = append(rec.Sys[:0], r.mem[at:at+used]...)
}
