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
// kind (Extend).
type Asm struct {
	// Fixups are the exception table of the code: a load at At that may
	// fault, and where a tracer that catches the fault sends the thread
	// (To), as the kernel's own tables do for its user-memory accesses.
	Fixups []Fixup

	c      list
	labels []*obj.Prog // an ANOP per label: it encodes to nothing
	imms   []*obj.Prog // the MovRIs, in order: a shape's holes (shape.go)
	bound  []bool
	diags  []string
	err    error
	done   bool
}

// list is the program being built, as the assembler's linked list of Progs.
type list struct {
	ctxt        *obj.Link
	first, last *obj.Prog
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
	a := &Asm{c: list{ctxt: ctxt}}
	ctxt.DiagFunc = func(f string, args ...any) { a.diags = append(a.diags, fmt.Sprintf(f, args...)) }
	// As hand-written assembly: no NOP padding of jumps to 32-byte
	// boundaries (the library's default, "alignedjumps").
	ctxt.IsAsm = true
	return a
}

// NewLabel returns an unbound label.
func (a *Asm) NewLabel() Label {
	p := a.c.newProg()
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
	a.c.add(a.labels[l])
}

func (c *list) newProg() *obj.Prog {
	p := c.ctxt.NewProg()
	p.Ctxt = c.ctxt
	return p
}

// add appends p to the program.
func (c *list) add(p *obj.Prog) {
	if c.first == nil {
		c.first = p
	} else {
		c.last.Link = p
	}
	c.last = p
}

// ins appends one instruction in Go operand order (from, to).
func (c *list) ins(as obj.As, from, to obj.Addr) *obj.Prog {
	p := c.newProg()
	p.As, p.From, p.To = as, from, to
	c.add(p)
	return p
}

func (a *Asm) fail(err error) { a.err = cmp.Or(a.err, err) }

func reg(r Reg) obj.Addr  { return obj.Addr{Type: obj.TYPE_REG, Reg: gx.REG_AX + int16(r)} }
func reg8(r Reg) obj.Addr { return obj.Addr{Type: obj.TYPE_REG, Reg: gx.REG_AL + int16(r)} }
func mem(m Mem) obj.Addr {
	return obj.Addr{Type: obj.TYPE_MEM, Reg: gx.REG_AX + int16(m.Base), Offset: int64(m.Disp)}
}
func imm(v int64) obj.Addr { return obj.Addr{Type: obj.TYPE_CONST, Offset: v} }

var none obj.Addr

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
	key := shapeKey(a)
	if code, ok := shapes.code(a, key); ok {
		return code, nil
	}
	if code, err = a.assemble(); err == nil {
		shapes.keep(a, key, code)
	}
	return code, err
}

// assemble encodes the program with golang-asm.
func (a *Asm) assemble() (code []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			code, err = nil, fmt.Errorf("x86: assembler panic: %v", r)
		}
	}()
	s := &obj.LSym{Func: &obj.FuncInfo{Text: a.c.first}}
	gx.Linkamd64.Assemble(a.c.ctxt, s, a.c.newProg)
	if len(a.diags) > 0 || a.c.ctxt.Errors > 0 {
		return nil, fmt.Errorf("x86: %s", strings.Join(a.diags, "; "))
	}
	return s.P, nil
}

// Offset is l's byte offset in the code, valid after Assemble.
func (a *Asm) Offset(l Label) int { return int(a.labels[l].Pc) }
