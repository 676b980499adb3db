package bytecode

import (
	"math/bits"

	"github.com/utap/utap/probe"
)

// simplify rewrites e into an equivalent, cheaper tree: constant subtrees
// folded by probe.Eval itself (so folding cannot drift from the reference),
// constant conditions resolved, algebraic identities applied. It builds new
// nodes and never changes e, which the caller still owns.
func simplify(e probe.Expr) probe.Expr {
	s := rewrite(e)
	// Parents read their operands' types (signedness, the width of - and
	// ~), so a rewrite must keep the type; a Cast that changes no value
	// costs no instruction.
	if t := e.Type(); s.Type() != t {
		return &probe.Cast{To: t, X: s}
	}
	return s
}

func rewrite(e probe.Expr) probe.Expr {
	switch n := e.(type) {
	case *probe.Unary:
		return foldIfPure(&probe.Unary{Op: n.Op, X: simplify(n.X)})
	case *probe.Cast:
		x := simplify(n.X)
		// (B)(A)y with B no wider than A is (B)y: the low bytes agree.
		if in, ok := x.(*probe.Cast); ok && n.To.Size <= in.To.Size {
			x = in.X
		}
		if x.Type() == n.To {
			return x
		}
		if n.To.Size < 8 {
			x = demand(x, n.To.Size)
		}
		return foldIfPure(&probe.Cast{To: n.To, X: x})
	case *probe.Deref:
		return &probe.Deref{T: n.T, Addr: simplify(n.Addr)}
	case *probe.StrOf:
		return &probe.StrOf{Addr: simplify(n.Addr), Len: n.Len}
	case *probe.Ternary:
		c, t, f := simplify(n.Cond), simplify(n.Then), simplify(n.Else)
		if k, ok := c.(*probe.Const); ok {
			if constVal(k) != 0 {
				return simplify(&probe.Cast{To: n.T, X: t})
			}
			return simplify(&probe.Cast{To: n.T, X: f})
		}
		return &probe.Ternary{Cond: c, Then: t, Else: f, T: n.T}
	case *probe.Binary:
		b := &probe.Binary{Op: n.Op, X: simplify(n.X), Y: simplify(n.Y), T: n.T}
		if n.T.Size < 8 {
			b = demand(b, n.T.Size).(*probe.Binary)
		}
		return simplifyBinary(b)
	}
	return e
}

// modular operators: the low bytes of the result depend only on the low
// bytes of the operands (of the left one for <<), whatever their signedness.
var modular = map[probe.Op]bool{
	probe.OpAdd: true, probe.OpSub: true, probe.OpMul: true, probe.OpShl: true,
	probe.OpAnd: true, probe.OpOr: true, probe.OpXor: true,
}

// demand rewrites e, of which only the low size bytes will be used, by
// dropping the casts below it that keep at least those bytes: dead
// extends. The result may have another type than e, so it only replaces
// operands whose type no longer matters; a Binary keeps its own.
func demand(e probe.Expr, size uint8) probe.Expr {
	switch n := e.(type) {
	case *probe.Cast:
		if n.To.Size >= size {
			return demand(n.X, size)
		}
	case *probe.Binary:
		if !modular[n.Op] || n.T.Size < size || n.X.Type().Str {
			return e
		}
		b := &probe.Binary{Op: n.Op, X: demand(n.X, size), Y: n.Y, T: n.T}
		if n.Op != probe.OpShl {
			b.Y = demand(n.Y, size)
		}
		return b
	}
	return e
}

// constVal is a constant's canonical 64-bit value.
func constVal(k *probe.Const) uint64 {
	v, _ := probe.Eval(k, nil)
	return v.Int
}

func konst(v uint64, t probe.Type) *probe.Const {
	k := &probe.Const{Val: v, T: t}
	k.Val = constVal(k)
	return k
}

// pure says whether e is computed from constants only.
func pure(e probe.Expr) bool {
	switch n := e.(type) {
	case *probe.Const:
		return true
	case *probe.Unary:
		return pure(n.X)
	case *probe.Cast:
		return pure(n.X)
	case *probe.Binary:
		return !n.X.Type().Str && !n.Y.Type().Str && pure(n.X) && pure(n.Y)
	case *probe.Ternary:
		return pure(n.Cond) && pure(n.Then) && pure(n.Else)
	}
	return false
}

// mayFault says whether evaluating e may fail: memory reads, and
// arguments beyond the six every ABI passes in registers.
func mayFault(e probe.Expr) bool {
	switch n := e.(type) {
	case *probe.Const, *probe.StrLit, probe.Builtin, *probe.Reg:
		return false
	case *probe.Arg:
		return n.N < 1 || n.N > 6
	case *probe.Unary:
		return mayFault(n.X)
	case *probe.Cast:
		return mayFault(n.X)
	case *probe.Binary:
		return mayFault(n.X) || mayFault(n.Y)
	case *probe.Ternary:
		return mayFault(n.Cond) || mayFault(n.Then) || mayFault(n.Else)
	}
	return true
}

func foldIfPure(e probe.Expr) probe.Expr {
	if !pure(e) {
		return e
	}
	v, err := probe.Eval(e, nil)
	if err != nil {
		return e // let the compiler report it
	}
	return &probe.Const{Val: v.Int, T: e.Type()}
}

var swapped = map[probe.Op]probe.Op{
	probe.OpAdd: probe.OpAdd, probe.OpMul: probe.OpMul, probe.OpAnd: probe.OpAnd,
	probe.OpOr: probe.OpOr, probe.OpXor: probe.OpXor, probe.OpEq: probe.OpEq, probe.OpNe: probe.OpNe,
	probe.OpLt: probe.OpGt, probe.OpGt: probe.OpLt, probe.OpLe: probe.OpGe, probe.OpGe: probe.OpLe,
}

func simplifyBinary(n *probe.Binary) probe.Expr {
	if n.X.Type().Str || n.Y.Type().Str {
		if _, ok := n.X.(*probe.StrLit); ok {
			n.X, n.Y = n.Y, n.X
		}
		return n
	}
	if pure(n) {
		return foldIfPure(n)
	}
	kx, xc := n.X.(*probe.Const)
	switch n.Op {
	case probe.OpLAnd, probe.OpLOr:
		if !xc {
			break
		}
		// The left operand decides, or the result is the right one as a bool.
		if (constVal(kx) != 0) == (n.Op == probe.OpLOr) {
			return konst(b2u(n.Op == probe.OpLOr), probe.S64)
		}
		return boolOf(n.Y)
	}
	signed := n.X.Type().Signed && n.Y.Type().Signed
	// Constants go right, so that the compiler can use immediate forms.
	if op, ok := swapped[n.Op]; ok && xc {
		if _, yc := n.Y.(*probe.Const); !yc {
			n = &probe.Binary{Op: op, X: n.Y, Y: n.X, T: n.T}
		}
	}
	ky, ok := n.Y.(*probe.Const)
	if !ok {
		return n
	}
	y := constVal(ky)
	same := func(x probe.Expr) probe.Expr { return simplify(&probe.Cast{To: n.T, X: x}) }
	zero := func() probe.Expr {
		if mayFault(n.X) {
			return n
		}
		return konst(0, n.T)
	}
	switch n.Op {
	case probe.OpAdd, probe.OpSub, probe.OpOr, probe.OpXor, probe.OpShl, probe.OpShr:
		if y == 0 || (n.Op == probe.OpShl || n.Op == probe.OpShr) && y&63 == 0 {
			return same(n.X)
		}
	case probe.OpMul:
		switch {
		case y == 0:
			return zero()
		case y == 1:
			return same(n.X)
		case y&(y-1) == 0:
			return &probe.Binary{Op: probe.OpShl, X: n.X, Y: konst(uint64(bits.TrailingZeros64(y)), probe.U64), T: n.T}
		}
	case probe.OpAnd:
		if y == 0 {
			return zero()
		}
		if y == ^uint64(0) {
			return same(n.X)
		}
	case probe.OpDiv, probe.OpMod:
		if y == 0 {
			return zero()
		}
		if signed || y&(y-1) != 0 {
			break
		}
		if n.Op == probe.OpMod {
			return &probe.Binary{Op: probe.OpAnd, X: n.X, Y: konst(y-1, probe.U64), T: n.T}
		}
		if y == 1 {
			return same(n.X)
		}
		// Unsigned: the shift must be logical whatever X's own signedness.
		x := &probe.Cast{To: probe.U64, X: n.X}
		return &probe.Binary{Op: probe.OpShr, X: x, Y: konst(uint64(bits.TrailingZeros64(y)), probe.U64), T: n.T}
	case probe.OpLAnd:
		if y != 0 {
			return boolOf(n.X)
		}
		return zero()
	case probe.OpLOr:
		if y == 0 {
			return boolOf(n.X)
		}
		if !mayFault(n.X) {
			return konst(1, n.T)
		}
	case probe.OpGt, probe.OpLe:
		// Unsigned x > 0 is x != 0, x <= 0 is x == 0.
		if !signed && y == 0 {
			op := probe.OpNe
			if n.Op == probe.OpLe {
				op = probe.OpEq
			}
			return &probe.Binary{Op: op, X: n.X, Y: ky, T: n.T}
		}
	case probe.OpLt, probe.OpGe:
		if !signed && y == 0 && !mayFault(n.X) {
			return konst(b2u(n.Op == probe.OpGe), n.T)
		}
	}
	return n
}

// boolOf is x != 0, or x itself when it is already 0 or 1.
func boolOf(x probe.Expr) probe.Expr {
	if isBool(x) {
		return x
	}
	return &probe.Binary{Op: probe.OpNe, X: x, Y: konst(0, probe.S64), T: probe.S64}
}

// isBool says whether e's value is always 0 or 1.
func isBool(e probe.Expr) bool {
	switch n := e.(type) {
	case *probe.Const:
		return constVal(n) <= 1
	case *probe.Unary:
		return n.Op == probe.OpNot
	case *probe.Binary:
		switch n.Op {
		case probe.OpEq, probe.OpNe, probe.OpLt, probe.OpLe, probe.OpGt, probe.OpGe, probe.OpLAnd, probe.OpLOr:
			return true
		}
	}
	return false
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
