package probe

// Type rules, applied as the parser builds each node. Every value is held
// in 64 bits, extended by its own type; an operation is then signed only
// if all its operands are signed (C's usual conversions once everything is
// 64-bit wide).

// needInt rejects strings where an integer is required.
func (p *parser) needInt(n node, what string) {
	if !n.Type().Str {
		return
	}
	src := p.text[n.pos:n.end]
	if _, ok := n.Expr.(*StrLit); ok {
		p.fail(n.pos, src, "string literal %s used as an integer in %s; string literals can only be compared with str(...) using == or !=", src, what)
	}
	p.fail(n.pos, src, "%s is a string, not an integer, in %s; strings can only be compared with == or != (or fetched)", src, what)
}

// arithType is the result type of an arithmetic operator.
func arithType(x, y Type) Type {
	if x.Signed && y.Signed {
		return S64
	}
	return U64
}

func isCompare(op Op) bool { return op >= OpEq && op <= OpGe }

// binaryType is the result type of an integer binary operator.
func binaryType(op Op, x, y Type) Type {
	switch {
	case isCompare(op), op == OpLAnd, op == OpLOr:
		return S64
	case op == OpShl, op == OpShr:
		return arithType(x, x)
	}
	return arithType(x, y)
}

func (p *parser) binaryNode(opTok token, op Op, x, y node) node {
	e := &Binary{Op: op, X: x.Expr, Y: y.Expr}
	xs, ys := x.Type().Str, y.Type().Str
	switch {
	case (xs || ys) && (op == OpEq || op == OpNe):
		if !xs || !ys {
			s, i := x, y
			if ys {
				s, i = y, x
			}
			p.fail(opTok.pos, opTok.text, "cannot compare string %s with integer %s", p.text[s.pos:s.end], p.text[i.pos:i.end])
		}
		_, xl := x.Expr.(*StrLit)
		_, yl := y.Expr.(*StrLit)
		if xl && yl {
			p.fail(opTok.pos, opTok.text, "comparing two string literals; compare str(addr) with a literal")
		}
		e.T = S64
	default:
		p.needInt(x, "operator "+op.String())
		p.needInt(y, "operator "+op.String())
		e.T = binaryType(op, x.Type(), y.Type())
	}
	n := p.wrap(e, x.pos, node{depth: max(x.depth, y.depth), end: y.end})
	return n
}

func (p *parser) ternary(c, t, f node) node {
	p.needInt(c, "the condition of ?:")
	p.needInt(t, "?:")
	p.needInt(f, "?:")
	e := &Ternary{Cond: c.Expr, Then: t.Expr, Else: f.Expr, T: arithType(t.Type(), f.Type())}
	return p.wrap(e, c.pos, node{depth: max(c.depth, t.depth, f.depth), end: f.end})
}
