package bytecode

import (
	"strings"

	"github.com/utap/utap/internal/x86"
	"github.com/utap/utap/probe"
)

// Memory reads in native code. While the tracer lives, a read is a plain
// copy whose loads are in the code's exception table (x86.Asm.Fixups): a
// bad address faults, the tracer catches the SIGSEGV at its ptrace stop,
// sends the thread to the fix-up and swallows the signal, as the kernel's
// exception tables do for its own user accesses. The read then says how
// many bytes it copied (none: EFAULT), as process_vm_readv would.
//
// Whether the tracer lives is one word in memory shared with it (the
// frame's NativeAliveSlot points to it): the id of the tracer's thread,
// which the kernel clears (FUTEX_OWNER_DIED) the moment that thread dies,
// however it dies, because the word is on its robust futex list. A dead
// tracer, or no word, and a read goes through process_vm_readv on the
// process's own pid: a bad address makes the call return EFAULT (or fewer
// bytes) instead of faulting, with nobody there to catch a SIGSEGV. The
// kernel reads as the breakpoint path's Env.Read does (process_vm_readv
// too), so a PROT_NONE page is unreadable on every path. That costs a
// system call per read, plus one getpid per hit (the pid is cached in the
// frame: a fork child after its tracer died gets its own).

// NativePidSlot is the frame slot where native reads cache the process's
// pid: the pad zeroes it before its first program that reads.
const NativePidSlot = 21

// NativeAliveSlot is the frame slot holding the address of the tracer's
// liveness word, 0 for none (reads go through system calls).
const NativeAliveSlot = 23

// aliveMask is the liveness word's thread id bits (FUTEX_TID_MASK): 0
// once the tracer's thread died or the tracer let the process go.
const aliveMask = 0x3fffffff

// lowestMapped is vm.mmap_min_addr's default: no process maps below it.
const lowestMapped = 65536

// Linux's system call numbers native reads use.
const (
	sysGetpid         = 39
	sysProcessVMReadv = 310
)

// maxNativeLit bounds a literal a native str() comparison reads (its bytes
// are in the frame).
const maxNativeLit = 64

// Reads says whether p's native code reads memory: it then reports a
// faulting read in RDX (Native).
func (p *Program) Reads() bool {
	for _, in := range p.code {
		if in.op >= opLoad8 && in.op <= opStrEq {
			return true
		}
	}
	return false
}

// FrameWords is the frame slots p's native code uses from
// NativeVRegBase: its virtual registers, then the scratch of its reads
// (two iovecs and a buffer).
func (p *Program) FrameWords() int {
	if !p.Reads() {
		return p.regs
	}
	return p.regs + 4 + p.bufWords()
}

func (p *Program) bufWords() int {
	n := 1
	for _, in := range p.code {
		if in.op == opStrEq {
			// The literal, its NUL and the byte after (readStr's beyond).
			n = max(n, (len(p.lits[in.imm])+2+7)/8)
		}
	}
	return n
}

// checkMem says why a memory operation cannot be native ("" if it can).
func (p *Program) checkMem(in insn) string {
	switch in.op {
	case opStrEq:
		if in.imm >= uint64(len(p.lits)) {
			return "a literal missing"
		}
		lit := p.lits[in.imm]
		if len(lit) > maxNativeLit || strings.IndexByte(lit, 0) >= 0 {
			return "a long literal"
		}
		return ""
	case opLoad8, opLoad8S, opLoad16, opLoad16S, opLoad32, opLoad32S, opLoad64:
		return ""
	}
	return in.op.String()
}

// Scratch slots of the reads, from the first after the virtual registers.
func (n *native) scr(i int) x86.Mem {
	return x86.Mem{Base: x86.RBX, Disp: 8 * int32(NativeVRegBase+n.regs+i)}
}

// read copies size bytes at RAX into the scratch (SelfRead): RAX is then
// the bytes read, or a negative errno. Clobbers RCX RDX RSI RDI R8–R11.
func (n *native) read(size int32) { n.copy(size, false) }

// readStr is read stopping after a NUL.
func (n *native) readStr(size int32) { n.copy(size, true) }

func (n *native) copy(size int32, untilNUL bool) {
	a := n.a
	local, remote, buf := n.scr(0), n.scr(2), n.scr(4)
	a.Store(remote, x86.RAX)
	a.StoreI32(x86.Mem{Base: x86.RBX, Disp: remote.Disp + 8}, size)
	a.Lea(x86.RCX, buf)
	a.Store(local, x86.RCX)
	a.StoreI32(x86.Mem{Base: x86.RBX, Disp: local.Disp + 8}, size)
	SelfRead(a, local, remote, untilNUL)
}

// SelfRead copies the iovec remote to the iovec local of the process's
// own memory (see the top of this file): RAX is then the bytes copied, or
// a negative errno. untilNUL stops the copy after the first NUL (a
// string's bytes beyond it are never touched). Clobbers RCX RDX RSI RDI
// R8–R11.
func SelfRead(a *x86.Asm, local, remote x86.Mem, untilNUL bool) {
	slow, done := a.NewLabel(), a.NewLabel()
	a.Load(x86.RAX, x86.Mem{Base: x86.RBX, Disp: 8 * NativeAliveSlot})
	a.RR(x86.TEST, x86.RAX, x86.RAX)
	a.Jcc(x86.E, slow)
	a.Load32(x86.RAX, x86.Mem{Base: x86.RAX})
	a.RI(x86.AND, x86.RAX, aliveMask)
	a.Jcc(x86.E, slow)
	directRead(a, local, remote, untilNUL)
	a.Jmp(done)
	a.Bind(slow)
	have := a.NewLabel()
	pid := x86.Mem{Base: x86.RBX, Disp: 8 * NativePidSlot}
	a.Load(x86.RDI, pid)
	a.RR(x86.TEST, x86.RDI, x86.RDI)
	a.Jcc(x86.NE, have)
	a.MovRI(x86.RAX, sysGetpid)
	a.Raw(0x0f, 0x05) // syscall
	a.MovRR(x86.RDI, x86.RAX)
	a.Store(pid, x86.RAX)
	a.Bind(have)
	a.Lea(x86.RSI, local)
	a.MovRI(x86.RDX, 1)
	a.Lea(x86.R10, remote)
	a.MovRI(x86.R8, 1)
	a.MovRI(x86.R9, 0)
	a.MovRI(x86.RAX, sysProcessVMReadv)
	a.Raw(0x0f, 0x05) // syscall
	a.Bind(done)
}

// directRead is SelfRead's copy by loads: aligned words (an aligned word
// never spans two pages, so a fault there means its page is unreadable
// and every byte before it was copied), bytes for the unaligned head and
// the tail. Both loads are fix-ups to the end, where RCX still counts the
// bytes not copied.
func directRead(a *x86.Asm, local, remote x86.Mem, untilNUL bool) {
	loop, bytes, end, ok := a.NewLabel(), a.NewLabel(), a.NewLabel(), a.NewLabel()
	word, byte1 := a.NewLabel(), a.NewLabel()
	a.Load(x86.RDI, local)
	a.Load(x86.RCX, x86.Mem{Base: local.Base, Disp: local.Disp + 8})
	a.Load(x86.RSI, remote)
	a.MovRR(x86.R8, x86.RCX)
	// Below mmap_min_addr (a NULL pointer's neighbourhood) or past the
	// user half nothing is ever mapped: no load, no fault, no stop.
	a.MovRI(x86.RAX, lowestMapped)
	a.RR(x86.CMP, x86.RSI, x86.RAX)
	a.Jcc(x86.B, end)
	a.MovRI(x86.RAX, 1<<47)
	a.RR(x86.CMP, x86.RSI, x86.RAX)
	a.Jcc(x86.AE, end)
	if untilNUL {
		a.MovRI(x86.R10, 0x0101010101010101)
		a.MovRI(x86.R11, 0x8080808080808080)
	}
	a.Bind(loop)
	a.RR(x86.TEST, x86.RCX, x86.RCX)
	a.Jcc(x86.E, end)
	a.MovRR(x86.RAX, x86.RSI)
	a.RI(x86.AND, x86.RAX, 7)
	a.Jcc(x86.NE, bytes)
	a.RI(x86.CMP, x86.RCX, 8)
	a.Jcc(x86.B, bytes)
	a.Bind(word)
	a.Load(x86.RAX, x86.Mem{Base: x86.RSI})
	a.Store(x86.Mem{Base: x86.RDI}, x86.RAX)
	a.RI(x86.ADD, x86.RSI, 8)
	a.RI(x86.ADD, x86.RDI, 8)
	a.RI(x86.SUB, x86.RCX, 8)
	if untilNUL {
		// A zero byte in the word: (v - 0x01…01) & ^v & 0x80…80.
		a.MovRR(x86.R9, x86.RAX)
		a.RR(x86.SUB, x86.R9, x86.R10)
		a.Not(x86.RAX)
		a.RR(x86.AND, x86.R9, x86.RAX)
		a.RR(x86.AND, x86.R9, x86.R11)
		a.Jcc(x86.NE, end)
	}
	a.Jmp(loop)
	a.Bind(bytes)
	a.Bind(byte1)
	a.Load8(x86.RAX, x86.Mem{Base: x86.RSI})
	a.Raw(0x88, 0x07) // mov %al,(%rdi)
	a.RI(x86.ADD, x86.RSI, 1)
	a.RI(x86.ADD, x86.RDI, 1)
	a.RI(x86.SUB, x86.RCX, 1)
	if untilNUL {
		a.RR(x86.TEST, x86.RAX, x86.RAX)
		a.Jcc(x86.E, end)
	}
	a.Jmp(loop)
	a.Bind(end)
	a.MovRR(x86.RAX, x86.R8)
	a.RR(x86.SUB, x86.RAX, x86.RCX)
	a.Jcc(x86.NE, ok)
	a.MovRI(x86.RAX, ^uint64(13)) // -EFAULT: nothing could be read
	a.Bind(ok)
	a.Fixups = append(a.Fixups, x86.Fixup{At: word, To: end}, x86.Fixup{At: byte1, To: end})
}

var loadSize = map[opcode]int32{
	opLoad8: 1, opLoad8S: 1, opLoad16: 2, opLoad16S: 2, opLoad32: 4, opLoad32S: 4, opLoad64: 8,
}

var loadExt = map[opcode]x86.Ext{
	opLoad8: x86.ZX8, opLoad8S: x86.SX8, opLoad16: x86.ZX16, opLoad16S: x86.SX16,
	opLoad32: x86.ZX32, opLoad32S: x86.SX32,
}

// load emits dst = *(T*)(a + imm), extended; a short read jumps to the
// fault.
func (n *native) load(in insn) {
	a := n.a
	a.Load(x86.RAX, vreg(in.a))
	n.addImm(in.imm)
	size := loadSize[in.op]
	n.read(size)
	a.RI(x86.CMP, x86.RAX, size)
	a.Jcc(x86.NE, n.fault)
	a.Load(x86.RAX, n.scr(4))
	if e, ok := loadExt[in.op]; ok {
		a.Extend(e, x86.RAX, x86.RAX)
	}
}

// addImm adds imm to RAX.
func (n *native) addImm(imm uint64) {
	if imm == 0 {
		return
	}
	if v, ok := simm32(imm); ok {
		n.a.RI(x86.ADD, x86.RAX, v)
		return
	}
	n.a.MovRI(x86.RCX, imm)
	n.a.RR(x86.ADD, x86.RAX, x86.RCX)
}

// strEq emits dst = (str(a) == lit) ^ b as the interpreter's readStr
// with limit len(lit)+1 decides it: it reads limit+1 bytes at once
// (process_vm_readv stops at the first unreadable page, as readStr's
// page-sized reads do). Equal: the literal's bytes then a NUL were read.
// Otherwise it faults unless a NUL was read below the limit or all
// limit+1 bytes were read (the string is longer: readStr's beyond byte).
func (n *native) strEq(in insn, lit string) {
	a := n.a
	limit := int32(len(lit) + 1)
	a.Load(x86.RAX, vreg(in.a))
	n.readStr(limit + 1)
	// R8 = bytes read (0 on an error).
	a.MovRR(x86.R8, x86.RAX)
	pos := a.NewLabel()
	a.RR(x86.TEST, x86.R8, x86.R8)
	a.Jcc(x86.GE, pos)
	a.MovRI(x86.R8, 0)
	a.Bind(pos)
	differ, result := a.NewLabel(), a.NewLabel()
	a.RI(x86.CMP, x86.R8, limit)
	a.Jcc(x86.L, differ)
	// The literal and its NUL, 8 bytes at a time, the last word masked.
	want := []byte(lit + "\x00")
	buf := n.scr(4)
	for off := 0; off < len(want); off += 8 {
		var w, mask uint64
		for i := 0; i < 8 && off+i < len(want); i++ {
			w |= uint64(want[off+i]) << (8 * i)
			mask |= 0xff << (8 * i)
		}
		a.Load(x86.RAX, x86.Mem{Base: x86.RBX, Disp: buf.Disp + int32(off)})
		if mask != ^uint64(0) {
			a.MovRI(x86.RCX, mask)
			a.RR(x86.AND, x86.RAX, x86.RCX)
		}
		a.MovRI(x86.RCX, w)
		a.RR(x86.CMP, x86.RAX, x86.RCX)
		a.Jcc(x86.NE, differ)
	}
	a.MovRI(x86.RAX, 1)
	a.Jmp(result)

	a.Bind(differ)
	// A NUL among the first min(read, limit) bytes: a shorter string.
	a.MovRI(x86.RCX, uint64(limit))
	a.RR(x86.CMP, x86.R8, x86.RCX)
	less := a.NewLabel()
	a.Jcc(x86.GE, less)
	a.MovRR(x86.RCX, x86.R8)
	a.Bind(less)
	a.Lea(x86.RSI, buf)
	loop, notEq := a.NewLabel(), a.NewLabel()
	a.Bind(loop)
	a.RR(x86.TEST, x86.RCX, x86.RCX)
	longer := a.NewLabel()
	a.Jcc(x86.E, longer)
	a.Load8(x86.RAX, x86.Mem{Base: x86.RSI})
	a.RR(x86.TEST, x86.RAX, x86.RAX)
	a.Jcc(x86.E, notEq)
	a.RI(x86.ADD, x86.RSI, 1)
	a.RI(x86.SUB, x86.RCX, 1)
	a.Jmp(loop)
	a.Bind(longer)
	a.RI(x86.CMP, x86.R8, limit+1)
	a.Jcc(x86.L, n.fault)
	a.Bind(notEq)
	a.MovRI(x86.RAX, 0)
	a.Bind(result)
	if in.b != 0 {
		a.RI(x86.XOR, x86.RAX, 1)
	}
}

// StrAddr is, for a fetch of str(addr) or of a sized string (buf: n
// bytes, NULs included), a program computing addr natively (p without
// its final string read), which a pad runs before it reads the string
// into its record (Unreadable, StrValue and NullValue then give the
// value the interpreter's Fetch gives); nil for any other program. A
// sized string's program leaves its length in virtual register 1
// (NativeBufLen).
func (p *Program) StrAddr() *Program {
	if !p.typ.Str || p.isLit || len(p.code) == 0 {
		return nil
	}
	switch last := p.code[len(p.code)-1]; {
	case last.op == opStr && last.a == 0:
	case last.op == opBuf && last.a == 0 && last.b == 1:
	default:
		return nil
	}
	q := *p
	q.code = p.code[:len(p.code)-1]
	q.typ = probe.U64
	q.scratch = new(scratch)
	return &q
}

// IsBuf says whether p reads a sized string (StrAddr): its bytes are the
// length's, NULs included, not a NUL-terminated string's.
func (p *Program) IsBuf() bool {
	return p.typ.Str && !p.isLit && len(p.code) > 0 && p.code[len(p.code)-1].op == opBuf
}

// NativeBufLen is the frame slot where a sized string's StrAddr program
// leaves the length: its virtual register 1.
const NativeBufLen = NativeVRegBase + 1

// EntryArgs has bit n-1 set for each argument n p reads as it was at the
// call's entry (a return probe's): the pad that hijacks the return keeps
// those for the return pad (NativeEntrySlot).
func (p *Program) EntryArgs() uint8 {
	var m uint8
	for _, in := range p.code {
		if in.op == opEntry && in.imm >= 1 && in.imm <= probe.MaxEntryArgs {
			m |= 1 << (in.imm - 1)
		}
	}
	return m
}

// StrValue is the value of a string read as the interpreter reads it.
func (p *Program) StrValue(b []byte) probe.Value {
	return probe.Value{Str: string(b), IsStr: true, Format: p.format}
}

// NullValue is the value of str(0).
func (p *Program) NullValue() probe.Value { return probe.Value{Null: true, Format: p.format} }
