package probe

import (
	"strconv"
)

// node is an expression being parsed, with its source span for errors.
type node struct {
	Expr
	pos, end int
	depth    int // height of the tree, bounded by maxDepth
}

// wrap makes n's parent node spanning pos..n.end.
func (p *parser) wrap(e Expr, pos int, n node) node {
	d := n.depth + 1
	if d > maxDepth {
		p.fail(pos, p.text[pos:n.end], "expression nested too deeply (more than %d levels)", maxDepth)
	}
	return node{e, pos, n.end, d}
}

// binLevels lists the binary operators by increasing precedence (C's).
var binLevels = [][]struct {
	text string
	op   Op
}{
	{{"||", OpLOr}},
	{{"&&", OpLAnd}},
	{{"|", OpOr}},
	{{"^", OpXor}},
	{{"&", OpAnd}},
	{{"==", OpEq}, {"!=", OpNe}},
	{{"<", OpLt}, {"<=", OpLe}, {">", OpGt}, {">=", OpGe}},
	{{"<<", OpShl}, {">>", OpShr}},
	{{"+", OpAdd}, {"-", OpSub}},
	{{"*", OpMul}, {"/", OpDiv}, {"%", OpMod}},
}

// enter bounds the nesting of the expression being parsed.
func (p *parser) enter() {
	p.depth++
	if p.depth > maxDepth {
		p.fail(p.tok.pos, p.tok.text, "expression nested too deeply (more than %d levels)", maxDepth)
	}
}

func (p *parser) leave() { p.depth-- }

// expr parses a full expression: the ternary level.
func (p *parser) expr() node {
	p.enter()
	defer p.leave()
	c := p.binary(0)
	if !p.is("?") {
		return c
	}
	p.next()
	t := p.expr()
	p.expect(":", "':' of the ?: operator")
	f := p.expr()
	return p.ternary(c, t, f)
}

// binary parses the operators of binLevels[level] and above, left to right.
func (p *parser) binary(level int) node {
	if level == len(binLevels) {
		return p.unary()
	}
	x := p.binary(level + 1)
	for {
		op, ok := OpInvalid, false
		if p.tok.kind == tPunct {
			for _, o := range binLevels[level] {
				if o.text == p.tok.text {
					op, ok = o.op, true
				}
			}
		}
		if !ok {
			return x
		}
		opTok := p.tok
		p.next()
		if p.tok.kind == tEOF {
			p.unexpected("an expression after " + strconv.Quote(opTok.text))
		}
		y := p.binary(level + 1)
		x = p.binaryNode(opTok, op, x, y)
	}
}

// typeNames are the reserved cast and dereference type names: ours, and
// the one-word C and <stdint.h> names people write out of habit (x86_64
// sizes; char is signed there).
var typeNames = map[string]Type{
	"u8": U8, "u16": U16, "u32": U32, "u64": U64,
	"s8": S8, "s16": S16, "s32": S32, "s64": S64,
	"char": S8, "short": S16, "int": S32, "long": S64, "unsigned": U32,
	"int8_t": S8, "int16_t": S16, "int32_t": S32, "int64_t": S64,
	"uint8_t": U8, "uint16_t": U16, "uint32_t": U32, "uint64_t": U64,
	"size_t": U64, "ssize_t": S64, "intptr_t": S64, "uintptr_t": U64,
}

// typeAhead reports whether tokens from the current one read "( type",
// and which type: the start of a cast or of a dereference.
func (p *parser) typeAhead() (Type, bool) {
	if !p.is("(") {
		return Type{}, false
	}
	t := p.peek(1)
	ty, ok := typeNames[t.text]
	return ty, ok && t.kind == tIdent
}

// castAhead reports whether tokens from the current one read "( type )",
// and which type.
func (p *parser) castAhead() (Type, bool) {
	ty, ok := p.typeAhead()
	if !ok {
		return Type{}, false
	}
	if c := p.peek(2); c.kind != tPunct || c.text != ")" {
		return Type{}, false
	}
	return ty, true
}

// derefAhead reports whether tokens from the current one read "( type * )".
func (p *parser) derefAhead() (Type, bool) {
	ty, ok := p.typeAhead()
	if !ok {
		return Type{}, false
	}
	star, cl := p.peek(2), p.peek(3)
	if star.kind != tPunct || star.text != "*" || cl.kind != tPunct || cl.text != ")" {
		return Type{}, false
	}
	return ty, true
}

func (p *parser) unary() node {
	start := p.tok.pos
	if p.tok.kind == tPunct {
		switch p.tok.text {
		case "-", "!", "~":
			op := OpNeg
			if p.tok.text == "!" {
				op = OpNot
			} else if p.tok.text == "~" {
				op = OpCompl
			}
			p.enter()
			defer p.leave()
			p.next()
			x := p.unary()
			p.needInt(x, "operator "+op.String())
			return p.wrap(&Unary{Op: op, X: x.Expr}, start, x)
		case "*":
			p.enter()
			defer p.leave()
			p.next()
			t := U64
			if ty, ok := p.derefAhead(); ok {
				t = ty
				for range 4 { // ( type * )
					p.next()
				}
			}
			x := p.unary()
			p.needInt(x, "a dereference")
			return p.wrap(&Deref{T: t, Addr: x.Expr}, start, x)
		case "(":
			if ty, ok := p.castAhead(); ok {
				p.enter()
				defer p.leave()
				for range 3 { // ( type )
					p.next()
				}
				x := p.unary()
				p.needInt(x, "a cast")
				return p.wrap(&Cast{To: ty, X: x.Expr}, start, x)
			}
		}
	}
	return p.primary()
}

func (p *parser) primary() node {
	t := p.tok
	end := t.pos + len(t.text)
	switch t.kind {
	case tInt:
		p.next()
		ty := S64
		if t.val > 1<<63-1 {
			ty = U64
		}
		return node{&Const{Val: t.val, T: ty}, t.pos, end, 1}
	case tString:
		p.next()
		if len(t.str) > MaxStrLen {
			p.fail(t.pos, t.text, "string literal longer than %d bytes can never match a str() value", MaxStrLen)
		}
		return node{&StrLit{Val: t.str}, t.pos, end, 1}
	case tIdent:
		p.next()
		return p.name(t)
	case tPunct:
		if t.text == "(" {
			p.next()
			if p.tok.kind == tEOF {
				p.unexpected("an expression")
			}
			x := p.expr()
			if p.tok.kind == tEOF {
				p.fail(p.tok.pos, "", "unexpected end of spec, want ')' to close the '(' at column %d", t.pos+1)
			}
			p.expect(")", "')'")
			return node{x.Expr, t.pos, p.prevEnd, x.depth}
		}
	}
	p.unexpected("an expression")
	panic("unreachable")
}

// name resolves an identifier: argN, a builtin, str(...), or a parameter
// name left for Site.Bind.
func (p *parser) name(t token) node {
	end := t.pos + len(t.text)
	switch t.text {
	case "ret":
		if p.kind != Return {
			p.fail(t.pos, t.text, "ret is only available in return probes (return:FUNC)")
		}
		return node{BuiltinRet, t.pos, end, 1}
	case "pid":
		return node{BuiltinPID, t.pos, end, 1}
	case "tid":
		return node{BuiltinTID, t.pos, end, 1}
	case "str":
		if !p.is("(") {
			p.unexpected("'(' after str")
		}
		p.enter()
		defer p.leave()
		p.next()
		x := p.expr()
		p.needInt(x, "str()")
		if p.tok.kind == tEOF {
			p.fail(p.tok.pos, "", "unexpected end of spec, want ')' to close str(")
		}
		p.expect(")", "')' to close str(")
		n := p.wrap(&StrOf{Addr: x.Expr}, t.pos, x)
		n.end = p.prevEnd
		return n
	case "if":
		p.fail(t.pos, t.text, "unexpected \"if\", want an expression")
	}
	if _, ok := typeNames[t.text]; ok {
		p.fail(t.pos, t.text, "%s is a type: write a cast (%s)x or a dereference *(%s*)addr", t.text, t.text, t.text)
	}
	if n, ok := argNumber(t.text); ok {
		if n == 0 {
			p.fail(t.pos, t.text, "no argument arg0: arguments are arg1..arg%d, counted from 1 (bpftrace's arg0 is utap's arg1)", MaxArg)
		}
		if n < 1 || n > MaxArg {
			p.fail(t.pos, t.text, "no argument %s: arguments are arg1..arg%d (arg1..arg6 in registers, the rest from the stack)", t.text, MaxArg)
		}
		return node{&Arg{N: n}, t.pos, end, 1}
	}
	return node{&Ident{Name: t.text}, t.pos, end, 1}
}

// MaxArg is the highest argN the language accepts.
const MaxArg = 16

// argNumber parses "argN".
func argNumber(s string) (int, bool) {
	if len(s) < 4 || s[:3] != "arg" {
		return 0, false
	}
	n := 0
	for _, c := range []byte(s[3:]) {
		if !isDigit(c) {
			return 0, false
		}
		if n < 1000 {
			n = n*10 + int(c-'0')
		}
	}
	return n, true
}
