package x86

import (
	"cmp"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/twitchyliquid64/golang-asm/obj"
	gx "github.com/twitchyliquid64/golang-asm/obj/x86"
	"github.com/twitchyliquid64/golang-asm/objabi"
)

// Reg is a general register in hardware numbering.
type Reg uint8

const (
	RAX Reg = iota
	RCX
	RDX
	RBX
	RSP
	RBP
	RSI
	RDI
	R8
	R9
	R10
	R11
	R12
	R13
	R14
	R15
)

// Mem is the memory operand [Base+Disp].
type Mem struct {
	Base Reg
	Disp int32
}

// Label is a position in the code, bound by Bind.
type Label int

// CC is a condition code, named as in Intel's Jcc.
type CC uint8

const (
	E  CC = iota // equal / zero
	NE           // not equal
	B            // unsigned <
	AE           // unsigned >=
	BE           // unsigned <=
	A            // unsigned >
	L            // signed <
	GE           // signed >=
	LE           // signed <=
	G            // signed >
	S            // sign
	NS           // no sign
	O            // overflow
	NO           // no overflow
)

var ccOps = [...][2]obj.As{ // Jcc, SETcc
	E: {gx.AJEQ, gx.ASETEQ}, NE: {gx.AJNE, gx.ASETNE},
	B: {gx.AJCS, gx.ASETCS}, AE: {gx.AJCC, gx.ASETCC},
	BE: {gx.AJLS, gx.ASETLS}, A: {gx.AJHI, gx.ASETHI},
	L: {gx.AJLT, gx.ASETLT}, GE: {gx.AJGE, gx.ASETGE},
	LE: {gx.AJLE, gx.ASETLE}, G: {gx.AJGT, gx.ASETGT},
	S: {gx.AJMI, gx.ASETMI}, NS: {gx.AJPL, gx.ASETPL},
	O: {gx.AJOS, gx.ASETOS}, NO: {gx.AJOC, gx.ASETOC},
}

// Asm assembles x86-64 code through Go's own assembler (cmd/internal/obj
// as the golang-asm library), so that no encoding is written by hand.
// Operands are (dst, src), Intel order. An Asm assembles once.
type Asm struct {
	ctxt        *obj.Link
	first, last *obj.Prog
	labels      []*obj.Prog // an ANOP per label: it encodes to nothing
	bound       []bool
	diags       []string
	err         error
	done        bool
}

// initMu serializes contexts' set-up: the first initializes asm6's global
// tables.
var initMu sync.Mutex

// NewAsm returns an empty assembler. It drives the amd64 back end
// (obj/x86's LinkArch) itself rather than through golang-asm's Builder,
// whose constructor rebuilds the assembler front end's instruction-name
// maps every time: two thirds of the cost of a pad.
func NewAsm() *Asm {
	initMu.Lock()
	ctxt := obj.Linknew(&gx.Linkamd64)
	ctxt.Headtype = objabi.Hlinux
	gx.Linkamd64.Init(ctxt)
	initMu.Unlock()
	a := &Asm{ctxt: ctxt}
	a.ctxt.DiagFunc = func(f string, args ...any) { a.diags = append(a.diags, fmt.Sprintf(f, args...)) }
	// As hand-written assembly: no NOP padding of jumps to 32-byte
	// boundaries (the library's default, "alignedjumps").
	a.ctxt.IsAsm = true
	return a
}

// NewLabel returns an unbound label.
func (a *Asm) NewLabel() Label {
	p := a.newProg()
	p.As = obj.ANOP
	a.labels = append(a.labels, p)
	a.bound = append(a.bound, false)
	return Label(len(a.labels) - 1)
}

// Bind places l at the next instruction.
func (a *Asm) Bind(l Label) {
	if a.bound[l] {
		a.fail(fmt.Errorf("label %d bound twice", l))
		return
	}
	a.bound[l] = true
	a.add(a.labels[l])
}

func (a *Asm) newProg() *obj.Prog {
	p := a.ctxt.NewProg()
	p.Ctxt = a.ctxt
	return p
}

// add appends p to the program.
func (a *Asm) add(p *obj.Prog) {
	if a.first == nil {
		a.first = p
	} else {
		a.last.Link = p
	}
	a.last = p
}

func (a *Asm) fail(err error) { a.err = cmp.Or(a.err, err) }

func reg(r Reg) obj.Addr  { return obj.Addr{Type: obj.TYPE_REG, Reg: gx.REG_AX + int16(r)} }
func reg8(r Reg) obj.Addr { return obj.Addr{Type: obj.TYPE_REG, Reg: gx.REG_AL + int16(r)} }
func mem(m Mem) obj.Addr {
	return obj.Addr{Type: obj.TYPE_MEM, Reg: gx.REG_AX + int16(m.Base), Offset: int64(m.Disp)}
}
func imm(v int64) obj.Addr { return obj.Addr{Type: obj.TYPE_CONST, Offset: v} }

var none obj.Addr

// ins appends one instruction in Go operand order (from, to).
func (a *Asm) ins(as obj.As, from, to obj.Addr) *obj.Prog {
	p := a.newProg()
	p.As, p.From, p.To = as, from, to
	a.add(p)
	return p
}

// Raw appends bytes verbatim.
func (a *Asm) Raw(b ...byte) {
	for _, c := range b {
		a.ins(gx.ABYTE, imm(int64(c)), none)
	}
}

// MovRR is mov dst, src.
func (a *Asm) MovRR(dst, src Reg) { a.ins(gx.AMOVQ, reg(src), reg(dst)) }

// MovRI loads imm in the shortest form that leaves the flags alone
// (never xor).
func (a *Asm) MovRI(dst Reg, v uint64) {
	switch {
	case v <= 0xffffffff:
		a.ins(gx.AMOVL, imm(int64(v)), reg(dst))
	default: // movq $simm32 or movabs, the assembler's choice
		a.ins(gx.AMOVQ, imm(int64(v)), reg(dst))
	}
}

// Load is mov dst, qword [m]; Load32 and Load8 zero-extend.
func (a *Asm) Load(dst Reg, m Mem)   { a.ins(gx.AMOVQ, mem(m), reg(dst)) }
func (a *Asm) Load32(dst Reg, m Mem) { a.ins(gx.AMOVL, mem(m), reg(dst)) }
func (a *Asm) Load8(dst Reg, m Mem)  { a.ins(gx.AMOVBQZX, mem(m), reg(dst)) }

// Store is mov qword [m], src.
func (a *Asm) Store(m Mem, src Reg) { a.ins(gx.AMOVQ, reg(src), mem(m)) }

// StoreI32 is mov qword [m], imm (sign-extended); StoreI32L stores 4 bytes.
func (a *Asm) StoreI32(m Mem, v int32)   { a.ins(gx.AMOVQ, imm(int64(v)), mem(m)) }
func (a *Asm) StoreI32L(m Mem, v uint32) { a.ins(gx.AMOVL, imm(int64(v)), mem(m)) }

// Lea is lea dst, [m].
func (a *Asm) Lea(dst Reg, m Mem) { a.ins(gx.ALEAQ, mem(m), reg(dst)) }

func (a *Asm) Push(r Reg) { a.ins(gx.APUSHQ, reg(r), none) }
func (a *Asm) Pop(r Reg)  { a.ins(gx.APOPQ, none, reg(r)) }
func (a *Asm) Pushfq()    { a.ins(gx.APUSHFQ, none, none) }
func (a *Asm) Popfq()     { a.ins(gx.APOPFQ, none, none) }

// Two-operand ALU: dst op= src.
func (a *Asm) Add(dst, src Reg)  { a.ins(gx.AADDQ, reg(src), reg(dst)) }
func (a *Asm) Sub(dst, src Reg)  { a.ins(gx.ASUBQ, reg(src), reg(dst)) }
func (a *Asm) And(dst, src Reg)  { a.ins(gx.AANDQ, reg(src), reg(dst)) }
func (a *Asm) Or(dst, src Reg)   { a.ins(gx.AORQ, reg(src), reg(dst)) }
func (a *Asm) Xor(dst, src Reg)  { a.ins(gx.AXORQ, reg(src), reg(dst)) }
func (a *Asm) Imul(dst, src Reg) { a.ins(gx.AIMULQ, reg(src), reg(dst)) }
func (a *Asm) Test(x, y Reg)     { a.ins(gx.ATESTQ, reg(y), reg(x)) }

// Cmp is cmp x, y: Go's CMP keeps Intel operand order.
func (a *Asm) Cmp(x, y Reg) { a.ins(gx.ACMPQ, reg(x), reg(y)) }

// Immediate forms: dst op= imm (sign-extended).
func (a *Asm) AddI(dst Reg, v int32) { a.ins(gx.AADDQ, imm(int64(v)), reg(dst)) }
func (a *Asm) SubI(dst Reg, v int32) { a.ins(gx.ASUBQ, imm(int64(v)), reg(dst)) }
func (a *Asm) AndI(dst Reg, v int32) { a.ins(gx.AANDQ, imm(int64(v)), reg(dst)) }
func (a *Asm) OrI(dst Reg, v int32)  { a.ins(gx.AORQ, imm(int64(v)), reg(dst)) }
func (a *Asm) XorI(dst Reg, v int32) { a.ins(gx.AXORQ, imm(int64(v)), reg(dst)) }
func (a *Asm) CmpI(x Reg, v int32)   { a.ins(gx.ACMPQ, reg(x), imm(int64(v))) }
func (a *Asm) TestI(x Reg, v int32)  { a.ins(gx.ATESTQ, imm(int64(v)), reg(x)) }

// ImulI is imul dst, dst, imm.
func (a *Asm) ImulI(dst Reg, v int32) {
	a.ins(gx.AIMUL3Q, imm(int64(v)), reg(dst)).RestArgs = []obj.Addr{reg(dst)}
}

// Shifts of dst by CL (the count masked to 0..63 by the CPU) or by imm.
func (a *Asm) Shl(dst Reg)           { a.ins(gx.ASHLQ, reg(RCX), reg(dst)) }
func (a *Asm) Shr(dst Reg)           { a.ins(gx.ASHRQ, reg(RCX), reg(dst)) }
func (a *Asm) Sar(dst Reg)           { a.ins(gx.ASARQ, reg(RCX), reg(dst)) }
func (a *Asm) ShlI(dst Reg, n uint8) { a.ins(gx.ASHLQ, imm(int64(n&63)), reg(dst)) }
func (a *Asm) ShrI(dst Reg, n uint8) { a.ins(gx.ASHRQ, imm(int64(n&63)), reg(dst)) }
func (a *Asm) SarI(dst Reg, n uint8) { a.ins(gx.ASARQ, imm(int64(n&63)), reg(dst)) }

func (a *Asm) Neg(r Reg) { a.ins(gx.ANEGQ, none, reg(r)) }
func (a *Asm) Not(r Reg) { a.ins(gx.ANOTQ, none, reg(r)) }

// Cqo sign-extends RAX into RDX; Div and Idiv divide RDX:RAX by r.
func (a *Asm) Cqo()       { a.ins(gx.ACQO, none, none) }
func (a *Asm) Div(r Reg)  { a.ins(gx.ADIVQ, reg(r), none) }
func (a *Asm) Idiv(r Reg) { a.ins(gx.AIDIVQ, reg(r), none) }

// Setcc sets the low byte of dst (not RSP: Go's assembler has no spl);
// SetccZx then zero-extends it to 64 bits.
func (a *Asm) Setcc(cc CC, dst Reg) { a.ins(ccOps[cc][1], none, reg8(dst)) }
func (a *Asm) SetccZx(cc CC, dst Reg) {
	a.Setcc(cc, dst)
	a.Movzx8(dst, dst)
}

// Extensions of src's low bits into dst; Mov32 zero-extends 32 bits.
func (a *Asm) Movsx8(dst, src Reg)  { a.ins(gx.AMOVBQSX, reg8(src), reg(dst)) }
func (a *Asm) Movsx16(dst, src Reg) { a.ins(gx.AMOVWQSX, reg(src), reg(dst)) }
func (a *Asm) Movsx32(dst, src Reg) { a.ins(gx.AMOVLQSX, reg(src), reg(dst)) }
func (a *Asm) Movzx8(dst, src Reg)  { a.ins(gx.AMOVBQZX, reg8(src), reg(dst)) }
func (a *Asm) Movzx16(dst, src Reg) { a.ins(gx.AMOVWQZX, reg(src), reg(dst)) }
func (a *Asm) Mov32(dst, src Reg)   { a.ins(gx.AMOVL, reg(src), reg(dst)) }

func (a *Asm) branch(as obj.As, l Label) {
	p := a.ins(as, none, obj.Addr{Type: obj.TYPE_BRANCH})
	p.To.SetTarget(a.labels[l])
}

// Jmp and Jcc jump to l; the assembler picks rel8 or rel32.
func (a *Asm) Jmp(l Label)        { a.branch(obj.AJMP, l) }
func (a *Asm) Jcc(cc CC, l Label) { a.branch(ccOps[cc][0], l) }

// Locked read-modify-writes of [m]; LockCmpxchg compares with RAX.
func (a *Asm) LockXadd(m Mem, r Reg) {
	a.ins(gx.ALOCK, none, none)
	a.ins(gx.AXADDQ, reg(r), mem(m))
}
func (a *Asm) LockCmpxchg(m Mem, r Reg) {
	a.ins(gx.ALOCK, none, none)
	a.ins(gx.ACMPXCHGQ, reg(r), mem(m))
}
func (a *Asm) LockInc(m Mem) {
	a.ins(gx.ALOCK, none, none)
	a.ins(gx.AINCQ, none, mem(m))
}

func (a *Asm) Rdtsc()         { a.ins(gx.ARDTSC, none, none) }
func (a *Asm) Rdfsbase(r Reg) { a.ins(gx.ARDFSBASEQ, none, reg(r)) }

// Assemble encodes the code; the assembler's diagnostics become the error.
func (a *Asm) Assemble() (code []byte, err error) {
	if a.done {
		return nil, errors.New("x86: Assemble called twice")
	}
	a.done = true
	for i, b := range a.bound {
		if !b {
			a.fail(fmt.Errorf("label %d never bound", i))
		}
	}
	if a.err != nil {
		return nil, fmt.Errorf("x86: %w", a.err)
	}
	defer func() {
		if r := recover(); r != nil {
			code, err = nil, fmt.Errorf("x86: assembler panic: %v", r)
		}
	}()
	s := &obj.LSym{Func: &obj.FuncInfo{Text: a.first}}
	gx.Linkamd64.Assemble(a.ctxt, s, a.newProg)
	code = s.P
	if len(a.diags) > 0 || a.ctxt.Errors > 0 {
		return nil, fmt.Errorf("x86: %s", strings.Join(a.diags, "; "))
	}
	return code, nil
}

// Offset is l's byte offset in the code, valid after Assemble.
func (a *Asm) Offset(l Label) int { return int(a.labels[l].Pc) }
