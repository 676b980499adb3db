package probe

import (
	"errors"
	"strconv"
	"strings"
)

// tokKind classifies the tokens of the expression part of a spec (the
// location before it is scanned separately: paths and globs are not
// expression tokens).
type tokKind uint8

const (
	tEOF tokKind = iota
	tIdent
	tInt    // integer or character literal; val holds it
	tString // string literal; str holds it unquoted
	tPunct
)

type token struct {
	kind tokKind
	text string // source text
	pos  int    // byte offset in the spec
	val  uint64
	str  string
}

// punct lists operators longest first so that "<<" wins over "<".
var punct = []string{
	"<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "=>",
	"+", "-", "*", "/", "%", "&", "|", "^", "~", "!", "<", ">", "?", ":", "(", ")", ",", "@", "=",
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func isIdentStart(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isAlnum(c byte) bool { return isIdentStart(c) || isDigit(c) }

// lex scans the token starting at or after pos. It is pure so that the
// parser can peek ahead by calling it again.
func (p *parser) lex(pos int) token {
	s := p.text
	for pos < len(s) && isSpace(s[pos]) {
		pos++
	}
	if pos == len(s) {
		return token{kind: tEOF, pos: pos}
	}
	c := s[pos]
	switch {
	case isIdentStart(c):
		end := pos + 1
		for end < len(s) && isAlnum(s[end]) {
			end++
		}
		return token{kind: tIdent, text: s[pos:end], pos: pos}
	case isDigit(c):
		end := pos + 1
		for end < len(s) && isAlnum(s[end]) {
			end++
		}
		text := s[pos:end]
		v, err := strconv.ParseUint(text, 0, 64)
		if err != nil {
			if errors.Is(err, strconv.ErrRange) {
				p.fail(pos, text, "integer literal %s overflows 64 bits", text)
			}
			p.fail(pos, text, "malformed integer literal %s", text)
		}
		return token{kind: tInt, text: text, pos: pos, val: v}
	case c == '"' || c == '\'':
		end := quoteEnd(s, pos)
		if end < 0 {
			p.fail(pos, s[pos:], "unterminated %s literal", quoteName(c))
		}
		text := s[pos:end]
		u, err := strconv.Unquote(text)
		if c == '\'' && err == nil && len([]rune(u)) != 1 {
			err = strconv.ErrSyntax
		}
		if err != nil {
			p.fail(pos, text, "invalid %s literal %s (escapes are Go's: \\n \\t \\\\ \\\" \\xFF \\000)", quoteName(c), text)
		}
		if c == '"' {
			return token{kind: tString, text: text, pos: pos, str: u}
		}
		r := []rune(u)[0]
		return token{kind: tInt, text: text, pos: pos, val: uint64(r)}
	}
	for _, op := range punct {
		if strings.HasPrefix(s[pos:], op) {
			return token{kind: tPunct, text: op, pos: pos}
		}
	}
	p.fail(pos, s[pos:pos+1], "unexpected character %q", s[pos:pos+1])
	panic("unreachable")
}

// quoteEnd returns the offset just past the quote closing the literal that
// opens at s[pos], or -1.
func quoteEnd(s string, pos int) int {
	q := s[pos]
	for i := pos + 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case q:
			return i + 1
		}
	}
	return -1
}

func quoteName(q byte) string {
	if q == '"' {
		return "string"
	}
	return "character"
}

// describe names a token in an error message.
func (t token) describe() string {
	if t.kind == tEOF {
		return "end of spec"
	}
	return strconv.Quote(t.text)
}
