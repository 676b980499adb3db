//go:build linux && amd64

package uprobe

import (
	"fmt"

	"github.com/cilium/ebpf/asm"
	"github.com/utap/utap/probe"
)

// strGen compiles the comparisons of strings, str() against a literal
// or another str(). It shares the expression's code, reads and stack
// slots; expr computes an address into R0.
type strGen struct {
	*code
	mem  *memReader
	regs *regAlloc
	expr func(probe.Expr) error
}

// compare compiles str(a) == "lit", str(a) == str(b) and their !=, as
// probe.Eval: against a literal only len(lit)+1 bytes are read; two str()
// are read whole (MaxStrLen bytes at most), and a fault in either makes
// the comparison fault even once a difference is known.
func (g *strGen) compare(e *probe.Binary) error {
	if e.Op != probe.OpEq && e.Op != probe.OpNe {
		return fmt.Errorf("%w: strings compare only with == and !=: %s", ErrUnsupported, e)
	}
	eq, ne := int32(1), int32(0)
	if e.Op == probe.OpNe {
		eq, ne = 0, 1
	}
	x, y := e.X, e.Y
	if _, ok := x.(*probe.StrLit); ok {
		x, y = y, x
	}
	sx, ok := x.(*probe.StrOf)
	if !ok {
		return fmt.Errorf("%w: string operand %s", ErrUnsupported, x)
	}
	switch y := y.(type) {
	case *probe.StrLit:
		return g.withLit(sx, y, eq, ne)
	case *probe.StrOf:
		return g.withStr(sx, y, eq, ne)
	}
	return fmt.Errorf("%w: string operand %s", ErrUnsupported, y)
}

func (g *strGen) withLit(s *probe.StrOf, lit *probe.StrLit, eq, ne int32) error {
	if err := g.expr(s.Addr); err != nil {
		return err
	}
	want := []byte(trunc(lit.Val))
	if len(want) < probe.MaxStrLen {
		want = append(want, 0)
	}
	differ, fault, end := g.label(), g.label(), g.label()
	g.mem.readStrInto(asm.RFP, slotStrBuf, int32(len(want)+1))
	g.emit(asm.JSLT.Imm(asm.R0, 0, fault))
	for i, b := range want {
		g.emit(
			asm.LoadMem(asm.R1, asm.RFP, int16(slotStrBuf+i), asm.Byte),
			asm.JNE.Imm(asm.R1, int32(b), differ),
		)
	}
	g.emit(asm.Mov.Imm(asm.R0, eq), asm.Ja.Label(end))
	g.mark(differ)
	g.emit(asm.Mov.Imm(asm.R0, ne), asm.Ja.Label(end))
	g.mark(fault)
	g.setFault()
	g.emit(asm.Mov.Imm(asm.R0, 0))
	g.mark(end)
	return nil
}

// withStr reads x whole into the string buffer, then y chunkLen
// bytes at a time into the chunk buffer, comparing as it goes. R8 says a
// difference was found, R9 holds y's address: both survive helper calls.
// y's address is computed first, since computing x's may run another
// string comparison that reuses the buffers.
func (g *strGen) withStr(x, y *probe.StrOf, eq, ne int32) error {
	if err := g.expr(y.Addr); err != nil {
		return err
	}
	if err := g.regs.push(); err != nil {
		return err
	}
	if err := g.expr(x.Addr); err != nil {
		return err
	}
	fault, finish := g.label(), g.label()
	g.mem.readStrInto(asm.RFP, slotStrBuf, probe.MaxStrLen+1)
	g.emit(asm.JSLT.Imm(asm.R0, 0, fault))
	g.regs.pop(asm.R9)
	g.emit(asm.Mov.Imm(asm.R8, 0))
	const chunks = probe.MaxStrLen / chunkLen
	for k := range chunks {
		differ, compared := g.label(), g.label()
		g.emit(asm.Mov.Reg(asm.R0, asm.R9))
		if k > 0 {
			g.emit(asm.Add.Imm(asm.R0, int32(k*chunkLen)))
		}
		g.mem.readStrInto(asm.RFP, slotChunk, chunkLen+1)
		g.emit(
			asm.JSLT.Imm(asm.R0, 0, fault),
			asm.JNE.Imm(asm.R8, 0, compared),
		)
		for i := range chunkLen {
			g.emit(
				asm.LoadMem(asm.R1, asm.RFP, int16(slotChunk+i), asm.Byte),
				asm.LoadMem(asm.R2, asm.RFP, int16(slotStrBuf+k*chunkLen+i), asm.Byte),
				asm.JNE.Reg(asm.R1, asm.R2, differ),
				asm.JEq.Imm(asm.R1, 0, finish), // both ended, equal
			)
		}
		g.emit(asm.Ja.Label(compared))
		g.mark(differ)
		g.emit(asm.Mov.Imm(asm.R8, 1))
		g.mark(compared)
		if k < chunks-1 {
			// R0 is the chunk's length with its NUL: y ended in it.
			g.emit(asm.JLT.Imm(asm.R0, chunkLen+1, finish))
		}
	}
	end := g.label()
	g.mark(finish)
	g.emit(asm.Mov.Imm(asm.R0, eq), asm.JEq.Imm(asm.R8, 0, end), asm.Mov.Imm(asm.R0, ne), asm.Ja.Label(end))
	g.mark(fault)
	g.setFault()
	g.emit(asm.Mov.Imm(asm.R0, 0))
	g.mark(end)
	return nil
}

func trunc(s string) string {
	if len(s) > probe.MaxStrLen {
		return s[:probe.MaxStrLen]
	}
	return s
}
