package probe

import (
	"fmt"
	"strings"
)

// Parse parses one probe spec:
//
//	spec     := [type ':'] location ['(' fetch {',' fetch} ')'] ['if' expr] [agg]
//	type     := entry | return | uprobe | uretprobe      (or LOC%return)
//	location := [object ':'] symbol ['+' offset] | [object ':'] 0xADDRESS
//	          | 'usdt:' [object ':'] provider ':' name   (static probes)
//	fetch    := expr [':' format]                        (format: d u x s p)
//	agg      := '=>' ['@' name '='] func '(' [expr [, min, max, step]] ')' ['by' key {',' key}]
//
// (the aggregation, after the condition), or a bpftrace one-liner with
// one aggregation, LOC [/pred/] { @name[keys] = func(args); }.
// Expressions are C-like and typed as they are parsed (docs/spec.md).
// Errors are *ParseError wrapping ErrSyntax.
func Parse(text string) (spec *Spec, err error) {
	if bpftraceShape(text) {
		return parseBpftrace(text)
	}
	p := &parser{text: text}
	defer func() {
		if r := recover(); r != nil {
			pe, ok := r.(*ParseError)
			if !ok {
				panic(r)
			}
			spec, err = nil, pe
		}
	}()
	s := &Spec{Text: text}
	p.pos = p.location(s)
	p.kind = s.Kind
	p.next()
	if p.is("(") {
		s.Fetches = p.fetches()
	}
	if p.tok.kind == tIdent && p.tok.text == "if" {
		p.next()
		if p.tok.kind == tEOF {
			p.unexpected("a condition")
		}
		c := p.expr()
		p.needInt(c, "a condition")
		s.Cond = c.Expr
	}
	if p.is("=>") {
		p.next()
		p.agg(s)
	}
	if p.tok.kind != tEOF {
		if p.tok.kind == tIdent && len(s.Fetches) == 0 && s.Cond == nil {
			p.fail(p.tok.pos, p.tok.text, "unexpected %s after the location, want '(' or 'if' (no spaces inside a location)", p.tok.describe())
		}
		if s.Agg != nil {
			p.unexpected("'by' and keys, or the end of the spec")
		}
		p.unexpected("'if', '=>' or the end of the spec")
	}
	return s, nil
}

// parseBpftrace parses a bpftrace one-liner (fromBpftrace) as the utap
// spec it translates to; Text stays as written, so events and the map's
// default name show it.
func parseBpftrace(text string) (*Spec, error) {
	utap, shifted, err := fromBpftrace(text)
	if err != nil {
		return nil, err
	}
	s, err := Parse(utap)
	if err != nil {
		return nil, err
	}
	if s.Agg == nil {
		return nil, &ParseError{Text: text, Col: 1, Msg: "a bpftrace-shaped spec must aggregate: { @map[keys] = count(); }"}
	}
	s.Text, s.Agg.Bpftrace, s.Agg.ShiftedArgs = text, true, shifted
	return s, nil
}

// parser holds the state of one Parse. Errors unwind by panicking with a
// *ParseError, recovered in Parse: the grammar is deep and every level
// would otherwise repeat the same check.
type parser struct {
	text    string
	pos     int   // offset just past tok
	prevEnd int   // offset just past the token before tok
	tok     token // current token
	kind    Kind  // of the spec: ret is valid only in return probes
	depth   int   // expression nesting, bounded by maxDepth
}

// maxDepth bounds expression nesting: engines compile expressions
// recursively and the BPF verifier has a small stack.
const maxDepth = 64

func (p *parser) next() {
	p.prevEnd = p.tok.pos + len(p.tok.text)
	if p.tok.kind == tEOF {
		p.prevEnd = p.tok.pos
	}
	p.tok = p.lex(p.pos)
	p.pos = p.tok.pos + len(p.tok.text)
}

// peek returns the n-th token after the current one (n >= 1).
func (p *parser) peek(n int) token {
	pos := p.pos
	var t token
	for range n {
		t = p.lex(pos)
		pos = t.pos + len(t.text)
	}
	return t
}

func (p *parser) is(punct string) bool { return p.tok.kind == tPunct && p.tok.text == punct }

func (p *parser) expect(punct, want string) {
	if !p.is(punct) {
		p.unexpected(want)
	}
	p.next()
}

func (p *parser) fail(pos int, tok, format string, args ...any) {
	panic(&ParseError{Text: p.text, Col: pos + 1, Token: tok, Msg: fmt.Sprintf(format, args...)})
}

func (p *parser) unexpected(want string) {
	p.fail(p.tok.pos, p.tok.text, "unexpected %s, want %s", p.tok.describe(), want)
}

// fetches parses '(' fetch {',' fetch} ')'; the current token is '('.
func (p *parser) fetches() []Fetch {
	open := p.tok
	p.next()
	if p.is(")") {
		p.next()
		return nil
	}
	var fs []Fetch
	for {
		start := p.tok.pos
		if p.tok.kind == tEOF {
			p.unexpected("an expression")
		}
		f := p.fetch()
		f.Text = strings.TrimSpace(p.text[start:p.prevEnd])
		fs = append(fs, f)
		switch {
		case p.is(","):
			p.next()
			if p.tok.kind == tEOF {
				p.unexpected("an expression")
			}
		case p.is(")"):
			p.next()
			return fs
		case p.tok.kind == tEOF:
			p.fail(p.tok.pos, "", "unexpected end of spec, want ',' or ')' to close the '(' at column %d", open.pos+1)
		default:
			p.unexpected("',' or ')'")
		}
	}
}

// fetch parses expr [':' format].
func (p *parser) fetch() Fetch {
	n := p.expr()
	f := Fetch{Expr: n.Expr}
	if !p.is(":") {
		if _, ok := n.Expr.(*StrLit); ok {
			p.fail(n.pos, p.text[n.pos:p.prevEnd], "a string literal cannot be fetched; fetch str(addr) or addr:s")
		}
		return f
	}
	p.next()
	ft := p.tok
	if ft.kind != tIdent {
		p.unexpected("a format letter (d u x s p)")
	}
	if len(ft.text) != 1 || !strings.Contains("duxsp", ft.text) {
		p.fail(ft.pos, ft.text, "unknown format %q, want d (signed), u (unsigned), x (hex), s (string) or p (pointer)", ft.text)
	}
	f.Format = Format(ft.text[0])
	p.next()
	isStr := n.Expr.Type().Str
	switch {
	case f.Format == FormatString && !isStr:
		// "read a string at this address"
		f.Expr = &StrOf{Addr: n.Expr}
	case f.Format != FormatString && isStr:
		p.fail(ft.pos, ft.text, "format %s needs an integer, but %s is a string (use s)", ft.text, p.text[n.pos:n.end])
	case isStr:
		if _, ok := n.Expr.(*StrLit); ok {
			p.fail(n.pos, p.text[n.pos:n.end], "a string literal cannot be fetched; fetch str(addr) or addr:s")
		}
	}
	return f
}
