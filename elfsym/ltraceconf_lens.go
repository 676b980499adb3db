//go:build linux && amd64

package elfsym

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/utap/utap/probe"
)

var confPrimitives = map[string]probe.ProtoType{
	"char":   {Kind: probe.ProtoChar, Size: 1, Signed: true},
	"short":  {Kind: probe.ProtoInt, Size: 2, Signed: true},
	"ushort": {Kind: probe.ProtoInt, Size: 2},
	"int":    {Kind: probe.ProtoInt, Size: 4, Signed: true},
	"uint":   {Kind: probe.ProtoInt, Size: 4},
	"long":   {Kind: probe.ProtoInt, Size: 8, Signed: true},
	"ulong":  {Kind: probe.ProtoInt, Size: 8},
	"octal":  {Kind: probe.ProtoOctal, Size: 4},
	"addr":   {Kind: probe.ProtoPointer, Size: 8},
	"file":   {Kind: probe.ProtoPointer, Size: 8},
	"void":   {Kind: probe.ProtoVoid},
	"format": {Kind: probe.ProtoString, Size: 8},
	"string": {Kind: probe.ProtoString, Size: 8},
	"int8_t": {Kind: probe.ProtoInt, Size: 1, Signed: true},
}

// lens reads one lens: [+] TYPE or LENS(TYPE), then any number of '*'.
func (p *confParser) lens() (lens, error) {
	out := p.eat('+') // an output argument: shown at the return
	l, err := p.lens1()
	l.t.Out = out
	return l, err
}

func (p *confParser) lens1() (lens, error) {
	w := p.ident()
	if w == "" {
		return lens{}, fmt.Errorf("want a type at %q", p.s[p.i:])
	}
	var l lens
	switch {
	case w == "hex" || w == "oct" || w == "bool" || w == "hide" || w == "bitvec":
		if !p.eat('(') {
			return lens{}, fmt.Errorf("%s: want (", w)
		}
		inner, err := p.lens()
		if err != nil {
			return lens{}, err
		}
		if !p.eat(')') {
			return lens{}, fmt.Errorf("%s: want )", w)
		}
		l = inner
		if l.ok && l.t.Kind != probe.ProtoPointer && l.t.Kind != probe.ProtoString {
			switch w {
			case "hex":
				l.t.Kind = probe.ProtoHex
			case "bitvec":
				l.t.Kind = probe.ProtoBitvec
			case "oct":
				l.t.Kind = probe.ProtoOctal
			case "bool":
				l.t.Kind = probe.ProtoBool
			}
		}
		l.hidden = w == "hide"
	case w == "enum":
		// enum[TYPE](NAME[=VALUE], ...): the type defaults to int; a
		// name without a value follows the one before, as in C.
		l = lens{t: confPrimitives["int"], ok: true}
		if p.eat('[') {
			inner, err := p.lens()
			if err != nil {
				return lens{}, err
			}
			p.eat(']')
			l = inner
			l.t.Kind = probe.ProtoInt
		}
		l.t.Enum = p.enumNames()
	case w == "string" || w == "format" || strings.HasPrefix(w, "string"):
		// string, string(T), string[N], stringN (old syntax: length in argN).
		start := p.i
		p.skipGroup('(', ')')
		l = lens{t: confPrimitives["string"], ok: true}
		l.t.Format = w == "format"
		if m := sizedArray.FindStringSubmatch(p.s[start:p.i]); m != nil {
			// string(array(char, arg3)*): memcpy's source, arg3 bytes.
			if m[1] != "" {
				l.t.LenArg, _ = strconv.Atoi(m[1])
			} else {
				l.t.LenConst, _ = strconv.Atoi(m[2])
			}
		}
		if n, err := strconv.Atoi(strings.TrimPrefix(w, "string")); err == nil && n > 0 {
			l.t.LenArg, l.t.CStr = n, true
		}
		p.sizedString(&l.t)
	case w == "struct" || w == "array":
		p.skipGroup('(', ')')
		l = lens{} // by value: not one register
	case w == "float" || w == "double":
		l = lens{}
	default:
		if t, ok := confPrimitives[w]; ok {
			l = lens{t: t, ok: true}
		} else if td, ok := p.typedefs[w]; ok {
			l = td
		} else if strings.HasPrefix(w, "arg") || strings.HasPrefix(w, "elt") {
			l = lens{t: confPrimitives["long"], ok: true}
		} else {
			return lens{}, fmt.Errorf("unknown type %q", w)
		}
	}
	for p.eat('*') {
		if l.t.Kind == probe.ProtoBitvec {
			// sigset_t*: the set it points to, as ltrace shows it.
			l.t.Kind = probe.ProtoBitvecPtr
			continue
		}
		// A pointer to anything else is an address; char* is one too
		// (ltrace shows the char it points to, utap the address).
		l = lens{t: confPrimitives["addr"], ok: true, hidden: l.hidden}
	}
	return l, nil
}

// enumNames reads an enum lens's (NAME[=VALUE], ...) list; nil when
// there is none or it cannot be read (the values then show as numbers).
func (p *confParser) enumNames() probe.Enum {
	if !p.eat('(') {
		return nil
	}
	names := probe.Enum{}
	next := int64(0)
	for !p.eat(')') {
		name := p.ident()
		if name == "" {
			p.skipTo(')')
			return nil
		}
		v := next
		if p.eat('=') {
			p.skipSpace()
			start := p.i
			for p.i < len(p.s) && strings.IndexByte(",) \t", p.s[p.i]) < 0 {
				p.i++
			}
			n, err := strconv.ParseInt(p.s[start:p.i], 0, 64)
			if err != nil {
				p.skipTo(')')
				return nil
			}
			v = n
		}
		if _, dup := names[v]; !dup {
			names[v] = name
		}
		next = v + 1
		p.eat(',')
	}
	return names
}

// skipTo moves past the next c.
func (p *confParser) skipTo(c byte) {
	for p.i < len(p.s) && p.s[p.i] != c {
		p.i++
	}
	p.eat(c)
}

// sizedArray is string's array(char, argN) or array(char, N) form.
var sizedArray = regexp.MustCompile(`^\s*\(\s*array\s*\(\s*char\s*,\s*(?:arg(\d+)|(\d+))\s*\)\s*\*\s*\)`)

// sizedString reads string's [argN], [N] or [retval], the bytes it shows
// (NULs included, as ltrace shows memcpy's source); another length
// expression (zero, eltN) leaves it a NUL-terminated string.
func (p *confParser) sizedString(t *probe.ProtoType) {
	p.skipSpace()
	if p.i >= len(p.s) || p.s[p.i] != '[' {
		return
	}
	start := p.i + 1
	p.skipGroup('[', ']')
	t.CStr = true // string[N]: up to its NUL too, as ltrace shows it
	expr := strings.TrimSpace(strings.TrimSuffix(p.s[start:p.i], "]"))
	if n, err := strconv.Atoi(strings.TrimPrefix(expr, "arg")); err == nil && n > 0 && strings.HasPrefix(expr, "arg") {
		t.LenArg = n
	} else if n, err := strconv.Atoi(expr); err == nil && n > 0 {
		t.LenConst = n
	} else if expr == "retval" {
		t.LenRet = true
	}
}
