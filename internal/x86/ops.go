package x86

import (
	"fmt"

	"github.com/twitchyliquid64/golang-asm/obj"
	gx "github.com/twitchyliquid64/golang-asm/obj/x86"
)

// Op is a two-operand 64-bit ALU or shift operation, for RR and RI.
type Op uint8

const (
	ADD Op = iota
	SUB
	AND
	OR
	XOR
	IMUL
	CMP  // flags of dst - src
	TEST // flags of dst & src
	SHL
	SHR
	SAR
	numOps
)

var aluOps = [numOps]struct {
	as   obj.As
	name string
}{
	ADD: {gx.AADDQ, "add"}, SUB: {gx.ASUBQ, "sub"}, AND: {gx.AANDQ, "and"}, OR: {gx.AORQ, "or"},
	XOR: {gx.AXORQ, "xor"}, IMUL: {gx.AIMULQ, "imul"}, CMP: {gx.ACMPQ, "cmp"}, TEST: {gx.ATESTQ, "test"},
	SHL: {gx.ASHLQ, "shl"}, SHR: {gx.ASHRQ, "shr"}, SAR: {gx.ASARQ, "sar"},
}

func (op Op) String() string {
	if op < numOps {
		return aluOps[op].name
	}
	return fmt.Sprintf("Op(%d)", uint8(op))
}

func (op Op) shift() bool { return op == SHL || op == SHR || op == SAR }

// RR is dst op= src. A shift's count is CL (masked to 0..63 by the CPU):
// src must be RCX.
func (a *Asm) RR(op Op, dst, src Reg) {
	switch {
	case op >= numOps:
		a.fail(fmt.Errorf("register form of %v", op))
	case op.shift() && src != RCX:
		a.fail(fmt.Errorf("%v by register %d: the count must be in rcx", op, src))
	case op == CMP: // Go's CMP keeps Intel operand order
		a.c.add(gx.ACMPQ, reg(dst), reg(src))
	default:
		a.c.add(aluOps[op].as, reg(src), reg(dst))
	}
}

// RI is dst op= v, v sign-extended to 64 bits; IMUL is imul dst, dst, v
// and a shift's count is v masked to 0..63.
func (a *Asm) RI(op Op, dst Reg, v int32) {
	switch {
	case op >= numOps:
		a.fail(fmt.Errorf("immediate form of %v", op))
	case op == CMP:
		a.c.add(gx.ACMPQ, reg(dst), imm(int64(v)))
	case op == IMUL:
		i := a.c.add(gx.AIMUL3Q, imm(int64(v)), reg(dst))
		a.c.ins[i].rest = reg(dst)
	case op.shift():
		a.c.add(aluOps[op].as, imm(int64(v&63)), reg(dst))
	default:
		a.c.add(aluOps[op].as, imm(int64(v)), reg(dst))
	}
}

// Ext is how Extend widens a register's low bits to 64.
type Ext uint8

const (
	SX8  Ext = iota // movsx from the low byte
	SX16            // movsx from the low word
	SX32            // movsxd
	ZX8             // movzx from the low byte
	ZX16            // movzx from the low word
	ZX32            // mov of the 32-bit registers, which zeroes the top half
	numExts
)

var extOps = [numExts]struct {
	as   obj.As
	byte bool // src is a byte register
}{
	SX8: {gx.AMOVBQSX, true}, SX16: {gx.AMOVWQSX, false}, SX32: {gx.AMOVLQSX, false},
	ZX8: {gx.AMOVBQZX, true}, ZX16: {gx.AMOVWQZX, false}, ZX32: {gx.AMOVL, false},
}

// Extend sets dst to src's low bits extended as e says.
func (a *Asm) Extend(e Ext, dst, src Reg) {
	if e >= numExts {
		a.fail(fmt.Errorf("extension %d", e))
		return
	}
	from := reg(src)
	if extOps[e].byte {
		from = reg8(src)
	}
	a.c.add(extOps[e].as, from, reg(dst))
}

// Raw appends bytes verbatim.
func (a *Asm) Raw(b ...byte) {
	for _, c := range b {
		a.c.add(gx.ABYTE, imm(int64(c)), none)
	}
}

// MovRR is mov dst, src.
func (a *Asm) MovRR(dst, src Reg) { a.c.add(gx.AMOVQ, reg(src), reg(dst)) }

// MovRI loads imm in the shortest form that leaves the flags alone
// (never xor).
func (a *Asm) MovRI(dst Reg, v uint64) {
	as := gx.AMOVQ // movq $simm32 or movabs, the assembler's choice
	if v <= 0xffffffff {
		as = gx.AMOVL
	}
	a.imms = append(a.imms, a.c.add(as, imm(int64(v)), reg(dst)))
}

// Load is mov dst, qword [m]; Load32 and Load8 zero-extend.
func (a *Asm) Load(dst Reg, m Mem)   { a.c.add(gx.AMOVQ, mem(m), reg(dst)) }
func (a *Asm) Load32(dst Reg, m Mem) { a.c.add(gx.AMOVL, mem(m), reg(dst)) }
func (a *Asm) Load8(dst Reg, m Mem)  { a.c.add(gx.AMOVBQZX, mem(m), reg(dst)) }

// Store is mov qword [m], src.
func (a *Asm) Store(m Mem, src Reg) { a.c.add(gx.AMOVQ, reg(src), mem(m)) }

// StoreI32 is mov qword [m], imm (sign-extended); StoreI32L stores 4 bytes.
func (a *Asm) StoreI32(m Mem, v int32)   { a.c.add(gx.AMOVQ, imm(int64(v)), mem(m)) }
func (a *Asm) StoreI32L(m Mem, v uint32) { a.c.add(gx.AMOVL, imm(int64(v)), mem(m)) }

// Lea is lea dst, [m].
func (a *Asm) Lea(dst Reg, m Mem) { a.c.add(gx.ALEAQ, mem(m), reg(dst)) }

func (a *Asm) Push(r Reg) { a.c.add(gx.APUSHQ, reg(r), none) }
func (a *Asm) Pop(r Reg)  { a.c.add(gx.APOPQ, none, reg(r)) }
func (a *Asm) Pushfq()    { a.c.add(gx.APUSHFQ, none, none) }
func (a *Asm) Popfq()     { a.c.add(gx.APOPFQ, none, none) }

func (a *Asm) Neg(r Reg) { a.c.add(gx.ANEGQ, none, reg(r)) }
func (a *Asm) Not(r Reg) { a.c.add(gx.ANOTQ, none, reg(r)) }

// Cqo sign-extends RAX into RDX; Div and Idiv divide RDX:RAX by r.
func (a *Asm) Cqo()       { a.c.add(gx.ACQO, none, none) }
func (a *Asm) Div(r Reg)  { a.c.add(gx.ADIVQ, reg(r), none) }
func (a *Asm) Idiv(r Reg) { a.c.add(gx.AIDIVQ, reg(r), none) }

// Setcc sets the low byte of dst (not RSP: Go's assembler has no spl);
// SetccZx then zero-extends it to 64 bits.
func (a *Asm) Setcc(cc CC, dst Reg) { a.c.add(ccOps[cc][1], none, reg8(dst)) }
func (a *Asm) SetccZx(cc CC, dst Reg) {
	a.Setcc(cc, dst)
	a.Extend(ZX8, dst, dst)
}

func (a *Asm) branch(as obj.As, l Label) {
	i := a.c.add(as, none, opnd{typ: obj.TYPE_BRANCH})
	a.c.ins[i].target = int32(l)
}

// Jmp and Jcc jump to l; the assembler picks rel8 or rel32.
func (a *Asm) Jmp(l Label)        { a.branch(obj.AJMP, l) }
func (a *Asm) Jcc(cc CC, l Label) { a.branch(ccOps[cc][0], l) }

// Locked read-modify-writes of [m]; LockCmpxchg compares with RAX.
func (a *Asm) LockXadd(m Mem, r Reg) {
	a.c.add(gx.ALOCK, none, none)
	a.c.add(gx.AXADDQ, reg(r), mem(m))
}
func (a *Asm) LockCmpxchg(m Mem, r Reg) {
	a.c.add(gx.ALOCK, none, none)
	a.c.add(gx.ACMPXCHGQ, reg(r), mem(m))
}
func (a *Asm) LockInc(m Mem) {
	a.c.add(gx.ALOCK, none, none)
	a.c.add(gx.AINCQ, none, mem(m))
}

// Plain read-modify-writes of [m], for memory no other CPU writes at the
// time (a restartable sequence's per-CPU data).
func (a *Asm) AddM(m Mem, r Reg) { a.c.add(gx.AADDQ, reg(r), mem(m)) }
func (a *Asm) IncM(m Mem)        { a.c.add(gx.AINCQ, none, mem(m)) }

func (a *Asm) Rdtsc()         { a.c.add(gx.ARDTSC, none, none) }
func (a *Asm) Rdfsbase(r Reg) { a.c.add(gx.ARDFSBASEQ, none, reg(r)) }

// Bsr sets dst to the index of src's highest set bit (src must not be 0).
func (a *Asm) Bsr(dst, src Reg) { a.c.add(gx.ABSRQ, reg(src), reg(dst)) }
