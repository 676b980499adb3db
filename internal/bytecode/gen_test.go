package bytecode

import (
	"math"
	"math/rand"

	"github.com/utap/utap/probe"
)

// gen builds random well-typed expressions of every node kind, with
// addresses that mostly land in the arena (strings, pointer slots, the
// guard page) and sometimes anywhere.
type gen struct {
	r       *rand.Rand
	a       *arena
	strStr  bool // allow str() == str(), which the uprobe engine refuses
	builtin bool // allow pid and tid
	regs    bool // allow registers by name (USDT operands)
}

var intTypes = []probe.Type{probe.U8, probe.U16, probe.U32, probe.U64, probe.S8, probe.S16, probe.S32, probe.S64}

var interesting = []uint64{
	0, 1, 2, 3, 7, 8, 63, 64, 65, 0x7f, 0x80, 0xff, 0x100, 0x7fff, 0x8000, 0xffff,
	0x7fffffff, 0x80000000, 0xffffffff, 1 << 32, math.MaxInt64, 1 << 63,
	math.MaxUint64, math.MaxUint64 - 1, math.MaxUint64 - 7,
}

func (g *gen) typ() probe.Type { return intTypes[g.r.Intn(len(intTypes))] }

func (g *gen) value() uint64 {
	switch g.r.Intn(4) {
	case 0:
		return g.r.Uint64()
	case 1:
		return uint64(g.r.Intn(200)) - 100
	}
	return interesting[g.r.Intn(len(interesting))]
}

func arith(x, y probe.Type) probe.Type {
	if x.Signed && y.Signed {
		return probe.S64
	}
	return probe.U64
}

// expr is a random integer expression at most d levels deep.
func (g *gen) expr(d int) probe.Expr {
	if d <= 1 || g.r.Intn(6) == 0 {
		return g.leaf()
	}
	switch g.r.Intn(14) {
	case 0:
		ops := []probe.Op{probe.OpNeg, probe.OpNot, probe.OpCompl}
		return &probe.Unary{Op: ops[g.r.Intn(len(ops))], X: g.expr(d - 1)}
	case 1, 2, 3, 4:
		op := probe.OpAdd + probe.Op(g.r.Intn(int(probe.OpXor-probe.OpAdd+1)))
		x, y := g.operands(d)
		t := arith(x.Type(), y.Type())
		if op == probe.OpShl || op == probe.OpShr {
			t = arith(x.Type(), x.Type())
		}
		if g.r.Intn(5) == 0 { // the IR allows any result type
			t = g.typ()
		}
		return &probe.Binary{Op: op, X: x, Y: y, T: t}
	case 5, 6:
		op := probe.OpEq + probe.Op(g.r.Intn(int(probe.OpGe-probe.OpEq+1)))
		x, y := g.operands(d)
		return &probe.Binary{Op: op, X: x, Y: y, T: probe.S64}
	case 7:
		op := probe.OpLAnd
		if g.r.Intn(2) == 0 {
			op = probe.OpLOr
		}
		return &probe.Binary{Op: op, X: g.expr(d - 1), Y: g.expr(d - 1), T: probe.S64}
	case 8:
		t, f := g.expr(d-1), g.expr(d-1)
		ty := arith(t.Type(), f.Type())
		if g.r.Intn(3) == 0 {
			ty = g.typ()
		}
		return &probe.Ternary{Cond: g.expr(d - 1), Then: t, Else: f, T: ty}
	case 9, 10:
		return &probe.Cast{To: g.typ(), X: g.expr(d - 1)}
	case 11, 12:
		return &probe.Deref{T: g.typ(), Addr: g.addr(d - 1)}
	}
	return g.strCompare(d)
}

// operands gives binary operands, one of them often a constant, which
// exercises the immediate forms and the folding.
func (g *gen) operands(d int) (probe.Expr, probe.Expr) {
	x, y := g.expr(d-1), g.expr(d-1)
	switch g.r.Intn(4) {
	case 0:
		y = g.konst()
	case 1:
		x = g.konst()
	}
	return x, y
}

func (g *gen) konst() probe.Expr {
	k := &probe.Const{Val: g.value()}
	if g.r.Intn(2) == 0 {
		k.T = g.typ()
	}
	return k
}

func (g *gen) leaf() probe.Expr {
	switch g.r.Intn(8) {
	case 0, 1, 2:
		return g.konst()
	case 3, 4, 5:
		return &probe.Arg{N: 1 + g.r.Intn(8)}
	case 6:
		if g.builtin {
			return []probe.Builtin{probe.BuiltinPID, probe.BuiltinTID, probe.BuiltinRet}[g.r.Intn(3)]
		}
	case 7:
		if g.regs {
			return &probe.Reg{Name: regNames[g.r.Intn(len(regNames))]}
		}
	}
	return probe.BuiltinRet
}

// addr is an address expression, mostly into the arena.
func (g *gen) addr(d int) probe.Expr {
	a := g.a
	switch g.r.Intn(8) {
	case 0:
		return &probe.Const{Val: a.sites[g.r.Intn(len(a.sites))], T: probe.U64}
	case 1:
		return &probe.Const{Val: a.ptrs[g.r.Intn(len(a.ptrs))], T: probe.U64}
	case 2, 3:
		off := &probe.Const{Val: uint64(g.r.Intn(64)) - 8}
		return &probe.Binary{Op: probe.OpAdd, X: &probe.Arg{N: 1 + g.r.Intn(8)}, Y: off, T: probe.U64}
	case 4:
		if g.regs && g.r.Intn(2) == 0 {
			// A USDT memory operand: -4@8(%rbp).
			off := &probe.Const{Val: uint64(g.r.Intn(64)) - 8}
			return &probe.Binary{Op: probe.OpAdd, X: &probe.Reg{Name: regNames[g.r.Intn(len(regNames))]}, Y: off, T: probe.U64}
		}
		return &probe.Arg{N: 1 + g.r.Intn(8)}
	case 5:
		if d > 1 {
			return &probe.Deref{T: probe.U64, Addr: g.addr(d - 1)}
		}
	case 6:
		return &probe.Const{Val: []uint64{0, 8, a.guard - 2, a.base, a.base + arenaPages*pageSize - 1}[g.r.Intn(5)]}
	}
	return g.expr(d)
}

func (g *gen) strCompare(d int) probe.Expr {
	op := probe.OpEq
	if g.r.Intn(3) == 0 {
		op = probe.OpNe
	}
	x := &probe.StrOf{Addr: g.addr(d - 1)}
	var y probe.Expr
	if g.strStr && g.r.Intn(4) == 0 {
		y = &probe.StrOf{Addr: g.addr(d - 1)}
	} else {
		s := strPool[g.r.Intn(len(strPool))]
		if g.r.Intn(4) == 0 && len(s) > 0 {
			s = s[:g.r.Intn(len(s))]
		}
		y = &probe.StrLit{Val: s}
	}
	if g.r.Intn(2) == 0 {
		x, y := y, x
		return &probe.Binary{Op: op, X: x, Y: y, T: probe.S64}
	}
	return &probe.Binary{Op: op, X: x, Y: y, T: probe.S64}
}

// fetch is a random fetch: mostly integers, sometimes str() or a literal.
func (g *gen) fetch(d int) probe.Expr {
	switch g.r.Intn(10) {
	case 0:
		return &probe.StrOf{Addr: g.addr(d - 1)}
	case 1:
		return &probe.StrLit{Val: strPool[g.r.Intn(len(strPool))]}
	}
	return g.expr(d)
}

// env is a random hit: arguments that are arena pointers, small or
// extreme integers; sp mostly in the arena, so stack arguments read.
func (g *gen) env(pid, tid uint64) *testEnv {
	a := g.a
	e := &testEnv{a: a, pid: pid, tid: tid, ret: g.value()}
	for i := range e.regs {
		switch g.r.Intn(4) {
		case 0:
			e.regs[i] = a.sites[g.r.Intn(len(a.sites))]
		case 1:
			e.regs[i] = a.ptrs[g.r.Intn(len(a.ptrs))]
		default:
			e.regs[i] = g.value()
		}
	}
	if g.regs {
		for i := range e.gp {
			if g.r.Intn(2) == 0 {
				e.gp[i] = a.ptrs[g.r.Intn(len(a.ptrs))]
			} else {
				e.gp[i] = g.value()
			}
		}
	}
	switch g.r.Intn(6) {
	case 0:
		e.sp = 0
	case 1:
		e.sp = a.guard - 16 // arg7 reads, arg8 faults
	default:
		e.sp = a.ptrs[g.r.Intn(len(a.ptrs))]
	}
	return e
}
