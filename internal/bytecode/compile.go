package bytecode

import (
	"errors"
	"fmt"

	"github.com/utap/utap/probe"
)

// Errors of the compiler, wrapped with the expression they concern.
var (
	ErrTooDeep     = errors.New("expression nested too deeply")
	ErrUnsupported = errors.New("expression not supported by the bytecode compiler")
)

// MaxDepth bounds the nesting of a compiled expression. The parser stops
// at 64 levels; the margin leaves room for trees built by other code.
const MaxDepth = 200

// numRegs is the size of the register file: registers are numbered by a
// uint8 so that the interpreter indexes a [256]uint64 without bounds checks.
const numRegs = 256

// compiler emits the code of one expression. Registers are allocated as a
// stack (Sethi–Ullman order): an expression computes into dst and may use
// the registers above it as scratch.
type compiler struct {
	code []insn
	lits []string
	regs int // highest register used + 1
}

func (c *compiler) emit(in insn) int {
	c.code = append(c.code, in)
	if r := int(in.dst) + 1; r > c.regs {
		c.regs = r
	}
	return len(c.code) - 1
}

// patch points the jump at pc to the next instruction emitted.
func (c *compiler) patch(pc int) { c.code[pc].imm = uint64(len(c.code)) }

// reg returns register r, or fails when the file is exhausted.
func reg(r int) (uint8, error) {
	if r >= numRegs {
		return 0, fmt.Errorf("%w: needs more than %d registers", ErrTooDeep, numRegs)
	}
	return uint8(r), nil
}

// rng is what the compiler knows of a register's value: the narrowest type
// whose canonical (extended) values include it, or only 0 and 1. It lets
// the compiler drop extends that change nothing.
type rng struct {
	size   uint8
	signed bool
	bool   bool
}

func rngOf(t probe.Type) rng { return rng{size: t.Size, signed: t.Signed} }

var boolRng = rng{size: 1, bool: true}

// fits says whether every value in r is already canonical in t.
func (r rng) fits(t probe.Type) bool {
	switch {
	case t.Size >= 8 || r.bool:
		return true
	case r.size == t.Size:
		return r.signed == t.Signed
	}
	return r.size < t.Size && (!r.signed || t.Signed)
}

// ext makes register r canonical in t.
func (c *compiler) ext(r uint8, have rng, t probe.Type) rng {
	if have.fits(t) {
		return have
	}
	var op opcode
	switch t.Size {
	case 1:
		op = opZext8
	case 2:
		op = opZext16
	default:
		op = opZext32
	}
	if t.Signed {
		op -= opZext8 - opSext8
	}
	c.emit(insn{op: op, dst: r, a: r})
	return rngOf(t)
}

// regsNeeded is the number of registers e needs (Sethi–Ullman).
func regsNeeded(e probe.Expr) int {
	switch n := e.(type) {
	case *probe.Unary:
		return regsNeeded(n.X)
	case *probe.Cast:
		return regsNeeded(n.X)
	case *probe.Deref:
		return regsNeeded(n.Addr)
	case *probe.StrOf:
		if n.Len != nil {
			return max(regsNeeded(n.Addr), 1+regsNeeded(n.Len))
		}
		return regsNeeded(n.Addr)
	case *probe.Ternary:
		return max(regsNeeded(n.Cond), regsNeeded(n.Then), regsNeeded(n.Else))
	case *probe.Binary:
		if n.Op == probe.OpLAnd || n.Op == probe.OpLOr {
			return max(regsNeeded(n.X), regsNeeded(n.Y))
		}
		if _, ok := n.Y.(*probe.Const); ok {
			return regsNeeded(n.X)
		}
		if _, ok := n.Y.(*probe.StrLit); ok {
			return regsNeeded(n.X)
		}
		a, b := regsNeeded(n.X), regsNeeded(n.Y)
		if a == b {
			return a + 1
		}
		return max(a, b)
	}
	return 1
}

// depth is the nesting depth of e.
func depth(e probe.Expr) int {
	switch n := e.(type) {
	case *probe.Unary:
		return 1 + depth(n.X)
	case *probe.Cast:
		return 1 + depth(n.X)
	case *probe.Deref:
		return 1 + depth(n.Addr)
	case *probe.StrOf:
		if n.Len != nil {
			return 1 + max(depth(n.Addr), depth(n.Len))
		}
		return 1 + depth(n.Addr)
	case *probe.Ternary:
		return 1 + max(depth(n.Cond), depth(n.Then), depth(n.Else))
	case *probe.Binary:
		return 1 + max(depth(n.X), depth(n.Y))
	}
	return 1
}

// expr computes the integer expression e into register dst.
func (c *compiler) expr(e probe.Expr, dst uint8) (rng, error) {
	switch n := e.(type) {
	case *probe.Const:
		v := constVal(n)
		c.emit(insn{op: opConst, dst: dst, imm: v})
		return constRng(v), nil
	case *probe.Arg:
		if n.N < 1 {
			return rng{}, fmt.Errorf("%w: argument %d", ErrUnsupported, n.N)
		}
		c.emit(insn{op: opArg, dst: dst, imm: uint64(n.N)})
		return rngOf(probe.U64), nil
	case *probe.Reg:
		i := regIndex(n.Name)
		if i < 0 {
			return rng{}, fmt.Errorf("%w: register %q", ErrUnsupported, n.Name)
		}
		c.emit(insn{op: opReg, dst: dst, imm: uint64(i)})
		return rngOf(probe.U64), nil
	case probe.Builtin:
		if a := n.EntryArgN(); a > 0 {
			c.emit(insn{op: opEntry, dst: dst, imm: uint64(a)})
			return rngOf(probe.U64), nil
		}
		op := map[probe.Builtin]opcode{probe.BuiltinPID: opPID, probe.BuiltinTID: opTID, probe.BuiltinRet: opRet}[n]
		if op == 0 {
			return rng{}, fmt.Errorf("%w: builtin %d", ErrUnsupported, n)
		}
		c.emit(insn{op: op, dst: dst})
		return rngOf(probe.S64), nil
	case *probe.Unary:
		return c.unary(n, dst)
	case *probe.Cast:
		if !validInt(n.To) {
			return rng{}, fmt.Errorf("%w: cast to %+v", ErrUnsupported, n.To)
		}
		r, err := c.expr(n.X, dst)
		if err != nil {
			return r, err
		}
		return c.ext(dst, r, n.To), nil
	case *probe.Deref:
		return c.deref(n, dst)
	case *probe.Ternary:
		return c.ternary(n, dst)
	case *probe.Binary:
		return c.binary(n, dst)
	case *probe.Ident:
		return rng{}, fmt.Errorf("%w: parameter %q is unbound (Site.Bind resolves names)", ErrUnsupported, n.Name)
	}
	return rng{}, fmt.Errorf("%w: %s used as an integer", ErrUnsupported, e)
}

func validInt(t probe.Type) bool {
	return !t.Str && (t.Size == 1 || t.Size == 2 || t.Size == 4 || t.Size == 8)
}

// constRng is the narrowest range holding v.
func constRng(v uint64) rng {
	switch {
	case v <= 1:
		return boolRng
	case v <= 0x7f || int64(v) >= -0x80 && int64(v) < 0:
		return rng{size: 1, signed: int64(v) < 0}
	case v <= 0x7fff || int64(v) >= -0x8000 && int64(v) < 0:
		return rng{size: 2, signed: int64(v) < 0}
	case v <= 0x7fffffff || int64(v) >= -0x80000000 && int64(v) < 0:
		return rng{size: 4, signed: int64(v) < 0}
	}
	return rng{size: 8}
}

func (c *compiler) unary(n *probe.Unary, dst uint8) (rng, error) {
	r, err := c.expr(n.X, dst)
	if err != nil {
		return r, err
	}
	switch n.Op {
	case probe.OpNot:
		c.emit(insn{op: opNot, dst: dst, a: dst})
		return boolRng, nil
	case probe.OpNeg:
		c.emit(insn{op: opNeg, dst: dst, a: dst})
	case probe.OpCompl:
		c.emit(insn{op: opCompl, dst: dst, a: dst})
	default:
		return r, fmt.Errorf("%w: unary operator %s", ErrUnsupported, n.Op)
	}
	return c.ext(dst, rng{size: 8}, n.Type()), nil
}

var loadOps = map[probe.Type]opcode{
	probe.U8: opLoad8, probe.S8: opLoad8S, probe.U16: opLoad16, probe.S16: opLoad16S,
	probe.U32: opLoad32, probe.S32: opLoad32S, probe.U64: opLoad64, probe.S64: opLoad64,
}

func (c *compiler) deref(n *probe.Deref, dst uint8) (rng, error) {
	op, ok := loadOps[n.T]
	if !ok {
		return rng{}, fmt.Errorf("%w: read of type %+v", ErrUnsupported, n.T)
	}
	addr, off := n.Addr, uint64(0)
	// *(T*)(p + k): the constant offset rides in the load.
	if b, ok := addr.(*probe.Binary); ok && b.T.Size == 8 && (b.Op == probe.OpAdd || b.Op == probe.OpSub) {
		if k, ok := b.Y.(*probe.Const); ok {
			addr, off = b.X, constVal(k)
			if b.Op == probe.OpSub {
				off = -off
			}
		}
	}
	if _, err := c.expr(addr, dst); err != nil {
		return rng{}, err
	}
	c.emit(insn{op: op, dst: dst, a: dst, imm: off})
	return rngOf(n.T), nil
}

func (c *compiler) ternary(n *probe.Ternary, dst uint8) (rng, error) {
	cond, jz := n.Cond, opJz
	if u, ok := cond.(*probe.Unary); ok && u.Op == probe.OpNot {
		cond, jz = u.X, opJnz
	}
	if _, err := c.expr(cond, dst); err != nil {
		return rng{}, err
	}
	toElse := c.emit(insn{op: jz, a: dst, dst: dst})
	rt, err := c.expr(n.Then, dst)
	if err != nil {
		return rng{}, err
	}
	// Each arm extends itself, so the join needs no extend of its own.
	c.ext(dst, rt, n.T)
	toEnd := c.emit(insn{op: opJmp, dst: dst})
	c.patch(toElse)
	re, err := c.expr(n.Else, dst)
	if err != nil {
		return rng{}, err
	}
	c.ext(dst, re, n.T)
	c.patch(toEnd)
	if rt.bool && re.bool {
		return boolRng, nil
	}
	return rngOf(n.T), nil
}
