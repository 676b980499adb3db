//go:build linux && amd64

package uprobe

import (
	"fmt"

	"github.com/cilium/ebpf/asm"
	"github.com/utap/utap/probe"
)

func (g *exprGen) unary(e *probe.Unary) error {
	if err := g.expr(e.X); err != nil {
		return err
	}
	switch e.Op {
	case probe.OpNeg:
		g.emit(asm.Neg.Imm(asm.R0, 0))
	case probe.OpCompl:
		g.emit(asm.Xor.Imm(asm.R0, -1))
	case probe.OpNot:
		g.emit(asm.Mov.Reg(asm.R1, asm.R0), asm.Mov.Imm(asm.R0, 0))
		g.compare(asm.JEq.Imm(asm.R1, 0, ""))
		return nil
	default:
		return fmt.Errorf("%w: unary %s", ErrUnsupported, e.Op)
	}
	g.norm(e.Type())
	return nil
}

// compare sets R0 to 1 when jump (whose target it fills in) is taken, else 0.
func (g *exprGen) compare(jump asm.Instruction) {
	t := g.label()
	g.emit(asm.Mov.Imm(asm.R2, 1), jump.WithReference(t), asm.Mov.Imm(asm.R2, 0))
	g.mark(t)
	g.emit(asm.Mov.Reg(asm.R0, asm.R2))
}

func (g *exprGen) ternary(e *probe.Ternary) error {
	els, end := g.label(), g.label()
	if err := g.expr(e.Cond); err != nil {
		return err
	}
	g.emit(asm.JEq.Imm(asm.R0, 0, els))
	if err := g.expr(e.Then); err != nil {
		return err
	}
	g.emit(asm.Ja.Label(end))
	g.mark(els)
	if err := g.expr(e.Else); err != nil {
		return err
	}
	g.mark(end)
	g.norm(e.T)
	return nil
}

// logic evaluates && and || with short circuit, to 0 or 1.
func (g *exprGen) logic(e *probe.Binary) error {
	short, end := g.label(), g.label()
	jump := asm.JEq // &&: a false operand decides
	val := int32(0)
	if e.Op == probe.OpLOr {
		jump, val = asm.JNE, 1
	}
	for _, x := range []probe.Expr{e.X, e.Y} {
		if err := g.expr(x); err != nil {
			return err
		}
		g.emit(jump.Imm(asm.R0, 0, short))
	}
	g.emit(asm.Mov.Imm(asm.R0, 1-val), asm.Ja.Label(end))
	g.mark(short)
	g.emit(asm.Mov.Imm(asm.R0, val))
	g.mark(end)
	return nil
}

// operands computes x into R0 and y into R1.
func (g *exprGen) operands(x, y probe.Expr) error {
	switch {
	case g.regs.direct(y):
		if err := g.expr(x); err != nil {
			return err
		}
		g.regs.load(y, asm.R1)
		return nil
	case g.regs.direct(x):
		if err := g.expr(y); err != nil {
			return err
		}
		g.emit(asm.Mov.Reg(asm.R1, asm.R0))
		g.regs.load(x, asm.R0)
		return nil
	}
	nx, ny := g.regs.need(x), g.regs.need(y)
	if max(nx, ny+1) <= max(ny, nx+1) {
		if err := g.expr(x); err != nil {
			return err
		}
		if err := g.regs.push(); err != nil {
			return err
		}
		if err := g.expr(y); err != nil {
			return err
		}
		g.emit(asm.Mov.Reg(asm.R1, asm.R0))
		g.regs.pop(asm.R0)
		return nil
	}
	if err := g.expr(y); err != nil {
		return err
	}
	if err := g.regs.push(); err != nil {
		return err
	}
	if err := g.expr(x); err != nil {
		return err
	}
	g.regs.pop(asm.R1)
	return nil
}

var aluOps = map[probe.Op]asm.ALUOp{
	probe.OpAdd: asm.Add, probe.OpSub: asm.Sub, probe.OpMul: asm.Mul,
	probe.OpAnd: asm.And, probe.OpOr: asm.Or, probe.OpXor: asm.Xor,
}

var cmpOps = map[probe.Op][2]asm.JumpOp{ // unsigned, signed
	probe.OpEq: {asm.JEq, asm.JEq}, probe.OpNe: {asm.JNE, asm.JNE},
	probe.OpLt: {asm.JLT, asm.JSLT}, probe.OpLe: {asm.JLE, asm.JSLE},
	probe.OpGt: {asm.JGT, asm.JSGT}, probe.OpGe: {asm.JGE, asm.JSGE},
}

func (g *exprGen) binary(e *probe.Binary) error {
	if e.Op == probe.OpLAnd || e.Op == probe.OpLOr {
		return g.logic(e)
	}
	if e.X.Type().Str || e.Y.Type().Str {
		return g.str.compare(e)
	}
	if err := g.operands(e.X, e.Y); err != nil {
		return err
	}
	// As probe.Eval: an operation is signed when both operands are; a
	// shift's kind is its left operand's.
	signed := e.X.Type().Signed && e.Y.Type().Signed
	if op, ok := aluOps[e.Op]; ok {
		g.emit(op.Reg(asm.R0, asm.R1))
		g.norm(e.T)
		return nil
	}
	if ops, ok := cmpOps[e.Op]; ok {
		op := ops[0]
		if signed {
			op = ops[1]
		}
		g.compare(op.Reg(asm.R0, asm.R1, ""))
		return nil
	}
	switch e.Op {
	case probe.OpShl:
		g.emit(asm.And.Imm(asm.R1, 63), asm.LSh.Reg(asm.R0, asm.R1))
	case probe.OpShr:
		g.emit(asm.And.Imm(asm.R1, 63))
		if e.X.Type().Signed {
			g.emit(asm.ArSh.Reg(asm.R0, asm.R1))
		} else {
			g.emit(asm.RSh.Reg(asm.R0, asm.R1))
		}
	case probe.OpDiv, probe.OpMod:
		g.divide(e.Op == probe.OpMod, signed)
	default:
		return fmt.Errorf("%w: operator %s", ErrUnsupported, e.Op)
	}
	g.norm(e.T)
	return nil
}

// divide computes R0 / R1 or R0 % R1 with x/0 = 0 and x%0 = 0 (BPF itself
// leaves x%0 = x). Without the v4 ISA a signed division divides magnitudes
// and fixes the sign: the quotient's is sign(x)^sign(y), the remainder's
// sign(x), as in C and Go.
func (g *exprGen) divide(mod, signed bool) {
	zero, end := g.label(), g.label()
	g.emit(asm.JEq.Imm(asm.R1, 0, zero))
	op := asm.Div
	if mod {
		op = asm.Mod
	}
	switch {
	case !signed:
		g.emit(op.Reg(asm.R0, asm.R1))
	case g.v4:
		sop := asm.SDiv
		if mod {
			sop = asm.SMod
		}
		g.emit(sop.Reg(asm.R0, asm.R1))
	default:
		g.emit(asm.Mov.Reg(asm.R2, asm.R0))
		if !mod {
			g.emit(asm.Xor.Reg(asm.R2, asm.R1))
		}
		for _, r := range []asm.Register{asm.R0, asm.R1} {
			pos := g.label()
			g.emit(asm.JSGE.Imm(r, 0, pos))
			g.emit(asm.Neg.Imm(r, 0))
			g.mark(pos)
		}
		pos := g.label()
		g.emit(op.Reg(asm.R0, asm.R1), asm.JSGE.Imm(asm.R2, 0, pos), asm.Neg.Imm(asm.R0, 0))
		g.mark(pos)
	}
	g.emit(asm.Ja.Label(end))
	g.mark(zero)
	g.emit(asm.Mov.Imm(asm.R0, 0))
	g.mark(end)
}
