package bytecode

import (
	"fmt"

	"github.com/utap/utap/probe"
)

// Operators as register–register and register–immediate operations,
// unsigned then signed.
var (
	regOps = map[probe.Op][2]opcode{
		probe.OpAdd: {opAdd, opAdd}, probe.OpSub: {opSub, opSub}, probe.OpMul: {opMul, opMul},
		probe.OpDiv: {opUDiv, opSDiv}, probe.OpMod: {opUMod, opSMod},
		probe.OpShl: {opShl, opShl}, probe.OpShr: {opShr, opSar},
		probe.OpAnd: {opAnd, opAnd}, probe.OpOr: {opOr, opOr}, probe.OpXor: {opXor, opXor},
		probe.OpEq: {opEq, opEq}, probe.OpNe: {opNe, opNe},
		probe.OpLt: {opULt, opSLt}, probe.OpLe: {opULe, opSLe},
	}
	immOps = map[probe.Op][2]opcode{
		probe.OpAdd: {opAddI, opAddI}, probe.OpMul: {opMulI, opMulI},
		probe.OpDiv: {opUDivI, opSDivI}, probe.OpMod: {opUModI, opSModI},
		probe.OpShl: {opShlI, opShlI}, probe.OpShr: {opShrI, opSarI},
		probe.OpAnd: {opAndI, opAndI}, probe.OpOr: {opOrI, opOrI}, probe.OpXor: {opXorI, opXorI},
		probe.OpEq: {opEqI, opEqI}, probe.OpNe: {opNeI, opNeI},
		probe.OpLt: {opULtI, opSLtI}, probe.OpLe: {opULeI, opSLeI},
		probe.OpGt: {opUGtI, opSGtI}, probe.OpGe: {opUGeI, opSGeI},
	}
)

func isCompare(op probe.Op) bool { return op >= probe.OpEq && op <= probe.OpGe }

func (c *compiler) binary(n *probe.Binary, dst uint8) (rng, error) {
	switch {
	case n.Op == probe.OpLAnd || n.Op == probe.OpLOr:
		return c.logic(n, dst)
	case n.X.Type().Str || n.Y.Type().Str:
		return c.strCompare(n, dst)
	}
	// Shifts take their kind from the left operand, the rest from both.
	signed := n.X.Type().Signed && n.Y.Type().Signed
	if n.Op == probe.OpShr {
		signed = n.X.Type().Signed
	}
	pick := func(ops [2]opcode) opcode {
		if signed {
			return ops[1]
		}
		return ops[0]
	}
	if k, ok := n.Y.(*probe.Const); ok {
		if op, ok := c.immOp(n.Op, signed, constVal(k)); ok {
			if _, err := c.expr(n.X, dst); err != nil {
				return rng{}, err
			}
			imm := constVal(k)
			switch op {
			case opAddI:
				if n.Op == probe.OpSub {
					imm = -imm
				}
			case opShlI, opShrI, opSarI:
				imm &= 63
			}
			c.emit(insn{op: op, dst: dst, a: dst, imm: imm})
			return c.result(n, dst), nil
		}
	}
	if k, ok := n.X.(*probe.Const); ok && n.Op == probe.OpSub {
		if _, err := c.expr(n.Y, dst); err != nil {
			return rng{}, err
		}
		c.emit(insn{op: opRSubI, dst: dst, a: dst, imm: constVal(k)})
		return c.result(n, dst), nil
	}
	op := n.Op
	x, y := n.X, n.Y
	if op == probe.OpGt || op == probe.OpGe { // a > b is b < a
		op, x, y = swapped[op], y, x
	}
	ops, ok := regOps[op]
	if !ok {
		return rng{}, fmt.Errorf("%w: operator %s", ErrUnsupported, n.Op)
	}
	// The operand needing more registers goes first; reads have no side
	// effects, and either fault makes the whole expression fault.
	first, second := x, y
	if regsNeeded(y) > regsNeeded(x) {
		first, second = y, x
	}
	tmp, err := reg(int(dst) + 1)
	if err != nil {
		return rng{}, err
	}
	if _, err := c.expr(first, dst); err != nil {
		return rng{}, err
	}
	if _, err := c.expr(second, tmp); err != nil {
		return rng{}, err
	}
	a, b := dst, tmp
	if first != x {
		a, b = tmp, dst
	}
	c.emit(insn{op: pick(ops), dst: dst, a: a, b: b})
	return c.result(n, dst), nil
}

// immOp is the immediate form of op, if it has one for this constant.
func (c *compiler) immOp(op probe.Op, signed bool, k uint64) (opcode, bool) {
	if op == probe.OpSub {
		op = probe.OpAdd
	}
	if (op == probe.OpDiv || op == probe.OpMod) && k == 0 {
		return 0, false // folded away unless the dividend may fault
	}
	ops, ok := immOps[op]
	if !ok {
		return 0, false
	}
	if signed {
		return ops[1], true
	}
	return ops[0], true
}

// result extends an arithmetic result to n's type; comparisons give 0 or 1.
func (c *compiler) result(n *probe.Binary, dst uint8) rng {
	if isCompare(n.Op) {
		return boolRng
	}
	return c.ext(dst, rng{size: 8}, n.T)
}

// logic compiles && and ||: the left operand decides with one jump, and
// a single test at the join turns the value into 0 or 1 when needed.
func (c *compiler) logic(n *probe.Binary, dst uint8) (rng, error) {
	rx, err := c.expr(n.X, dst)
	if err != nil {
		return rng{}, err
	}
	jump := opJz
	if n.Op == probe.OpLOr {
		jump = opJnz
	}
	skip := c.emit(insn{op: jump, dst: dst, a: dst})
	ry, err := c.expr(n.Y, dst)
	if err != nil {
		return rng{}, err
	}
	c.patch(skip)
	// && skips with 0 in dst, already a bool; || skips with X's value.
	if !ry.bool || n.Op == probe.OpLOr && !rx.bool {
		c.emit(insn{op: opNeI, dst: dst, a: dst})
	}
	return boolRng, nil
}

// strCompare compiles == and != of str() with a literal or another str().
func (c *compiler) strCompare(n *probe.Binary, dst uint8) (rng, error) {
	if n.Op != probe.OpEq && n.Op != probe.OpNe {
		return rng{}, fmt.Errorf("%w: strings compare only with == and !=: %s", ErrUnsupported, n)
	}
	neg := b2u(n.Op == probe.OpNe)
	x, y := n.X, n.Y
	if _, ok := x.(*probe.StrLit); ok {
		x, y = y, x
	}
	sx, ok := x.(*probe.StrOf)
	if !ok {
		return rng{}, fmt.Errorf("%w: cannot compare %s as a string", ErrUnsupported, x)
	}
	switch y := y.(type) {
	case *probe.StrLit:
		if _, err := c.expr(sx.Addr, dst); err != nil {
			return rng{}, err
		}
		c.lits = append(c.lits, y.Val)
		c.emit(insn{op: opStrEq, dst: dst, a: dst, b: uint8(neg), imm: uint64(len(c.lits) - 1)})
	case *probe.StrOf:
		// The reference reads x before y: keep that order, since which
		// one faults does not matter but a read must not be skipped.
		tmp, err := reg(int(dst) + 1)
		if err != nil {
			return rng{}, err
		}
		if _, err := c.expr(sx.Addr, dst); err != nil {
			return rng{}, err
		}
		if _, err := c.expr(y.Addr, tmp); err != nil {
			return rng{}, err
		}
		c.emit(insn{op: opStrEqS, dst: dst, a: dst, b: tmp, imm: neg})
	default:
		return rng{}, fmt.Errorf("%w: cannot compare %s as a string", ErrUnsupported, y)
	}
	return boolRng, nil
}
