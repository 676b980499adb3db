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

// Fixup is one entry of Asm.Fixups.
type Fixup struct{ At, To Label }

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
// Operands are (dst, src), Intel order. An Asm assembles once. Its
// instruction forms are in ops.go: one method per kind of instruction,
// the ALU and shift operations by table (RR, RI) and the extensions by
// kind (Extend). It records the program as a list of insns and makes
// the assembler's Progs of them only for a shape it has not assembled
// before (shape.go).
type Asm struct {
	// Fixups are the exception table of the code: a load at At that may
	// fault, and where a tracer that catches the fault sends the thread
	// (To), as the kernel's own tables do for its user-memory accesses.
	Fixups []Fixup

	c     list
	bound []bool  // by label
	pcs   []int64 // each label's offset, after Assemble
	imms  []int   // the MovRIs' insns, in order: a shape's holes
	diags []string
	err   error
	done  bool
}

// list is the program being built.
type list struct{ ins []insn }

// insn is one instruction in Go operand order (from, to), or a label's
// place (bind >= 0: an ANOP, which encodes to nothing). Small and
// without pointers: a pad is some 300 of them, made for every site.
type insn struct {
	as           obj.As
	target, bind int32 // a branch's label, -1 if none
	from, to     opnd
	rest         opnd // a third operand (IMUL3's), TYPE_NONE if none
}

// opnd is the part of an obj.Addr Asm's operands use.
type opnd struct {
	typ obj.AddrType
	reg int16
	off int64
}

func (o opnd) addr() obj.Addr { return obj.Addr{Type: o.typ, Reg: o.reg, Offset: o.off} }

// initMu serializes contexts' set-up: the first initializes asm6's global
// tables.
var initMu sync.Mutex

// NewAsm returns an empty assembler.
func NewAsm() *Asm {
	a := &Asm{}
	if b, ok := insPool.Get().(*[]insn); ok {
		a.c.ins = (*b)[:0]
	}
	return a
}

// insPool keeps programs' insn buffers for the next (a pad is some 300
// insns, the strace default places 500 pads in each process image).
var insPool sync.Pool

// NewLabel returns an unbound label.
func (a *Asm) NewLabel() Label {
	a.bound = append(a.bound, false)
	return Label(len(a.bound) - 1)
}

// Bind places l at the next instruction.
func (a *Asm) Bind(l Label) {
	if a.bound[l] {
		a.fail(fmt.Errorf("label %d bound twice", l))
		return
	}
	a.bound[l] = true
	a.c.ins = append(a.c.ins, insn{target: -1, bind: int32(l)})
}

// add appends one instruction in Go operand order (from, to) and
// returns its index.
func (c *list) add(as obj.As, from, to opnd) int {
	c.ins = append(c.ins, insn{as: as, from: from, to: to, target: -1, bind: -1})
	return len(c.ins) - 1
}

func (a *Asm) fail(err error) { a.err = cmp.Or(a.err, err) }

func reg(r Reg) opnd  { return opnd{typ: obj.TYPE_REG, reg: gx.REG_AX + int16(r)} }
func reg8(r Reg) opnd { return opnd{typ: obj.TYPE_REG, reg: gx.REG_AL + int16(r)} }
func mem(m Mem) opnd {
	return opnd{typ: obj.TYPE_MEM, reg: gx.REG_AX + int16(m.Base), off: int64(m.Disp)}
}
func imm(v int64) opnd { return opnd{typ: obj.TYPE_CONST, off: v} }

var none opnd

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
	defer a.release()
	kb := keyPool.Get().(*[]byte)
	key := shapeKey(a, *kb)
	defer func() { *kb = key; keyPool.Put(kb) }()
	if code, ok := shapes.code(a, key); ok {
		return code, nil
	}
	code, pcs, err := a.assemble()
	if err == nil {
		shapes.keep(a, key, code, pcs)
	}
	return code, err
}

// release gives the program's buffer back to insPool: an Asm assembles
// once, and its labels' offsets are kept apart (pcs).
func (a *Asm) release() {
	b := a.c.ins[:0]
	a.c.ins = nil
	insPool.Put(&b)
}

// assemble encodes the program with golang-asm, driving the amd64 back
// end (obj/x86's LinkArch) itself rather than through golang-asm's
// Builder, whose constructor rebuilds the assembler front end's
// instruction-name maps every time (two thirds of the cost of a pad). It
// returns the code and each insn's offset in it.
func (a *Asm) assemble() (code []byte, pcs []int64, err error) {
	initMu.Lock()
	ctxt := obj.Linknew(&gx.Linkamd64)
	ctxt.Headtype = objabi.Hlinux
	gx.Linkamd64.Init(ctxt)
	initMu.Unlock()
	ctxt.DiagFunc = func(f string, args ...any) { a.diags = append(a.diags, fmt.Sprintf(f, args...)) }
	// As hand-written assembly: no NOP padding of jumps to 32-byte
	// boundaries (the library's default, "alignedjumps").
	ctxt.IsAsm = true
	newProg := func() *obj.Prog {
		p := ctxt.NewProg()
		p.Ctxt = ctxt
		return p
	}
	labels := make([]*obj.Prog, len(a.bound))
	for i := range labels {
		labels[i] = newProg()
		labels[i].As = obj.ANOP
	}
	progs := make([]*obj.Prog, len(a.c.ins))
	for i, in := range a.c.ins {
		var p *obj.Prog
		if in.bind >= 0 {
			p = labels[in.bind]
		} else {
			p = newProg()
			p.As, p.From, p.To = in.as, in.from.addr(), in.to.addr()
			if in.rest.typ != obj.TYPE_NONE {
				p.RestArgs = []obj.Addr{in.rest.addr()}
			}
			if in.target >= 0 {
				p.To.SetTarget(labels[in.target])
			}
		}
		if i > 0 {
			progs[i-1].Link = p
		}
		progs[i] = p
	}
	if len(progs) == 0 {
		return nil, nil, nil
	}
	defer func() {
		if r := recover(); r != nil {
			code, pcs, err = nil, nil, fmt.Errorf("x86: assembler panic: %v", r)
		}
	}()
	s := &obj.LSym{Func: &obj.FuncInfo{Text: progs[0]}}
	gx.Linkamd64.Assemble(ctxt, s, newProg)
	if len(a.diags) > 0 || ctxt.Errors > 0 {
		return nil, nil, fmt.Errorf("x86: %s", strings.Join(a.diags, "; "))
	}
	pcs = make([]int64, len(progs))
	for i, p := range progs {
		pcs[i] = p.Pc
	}
	a.pcs = make([]int64, len(labels))
	for i, l := range labels {
		a.pcs[i] = l.Pc
	}
	return s.P, pcs, nil
}

// Offset is l's byte offset in the code, valid after Assemble.
func (a *Asm) Offset(l Label) int { return int(a.pcs[l]) }
