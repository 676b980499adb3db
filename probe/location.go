package probe

import (
	"errors"
	"strconv"
	"strings"
)

// typeWords are the probe types a spec may start with; the first ':'
// component is a type only if it is exactly one of these, otherwise it
// names the object (libc:malloc).
var typeWords = map[string]Kind{
	"entry": Entry, "return": Return, // utap
	"uprobe": Entry, "uretprobe": Return, // bpftrace
}

// comp is one ':'-separated component of a location, with its offset
// in the spec for errors.
type comp struct {
	s   string
	pos int
}

// location scans "[type:][object:]symbol[+off][%return]" or
// "[type:][object:]0xADDR" into s and returns the offset just past it.
// The location is not made of expression tokens (paths, globs, Go method
// symbols), so it is scanned on its own: it ends at white space or at the
// '(' opening the fetches.
func (p *parser) location(s *Spec) int {
	text := p.text
	start := 0
	for start < len(text) && isSpace(text[start]) {
		start++
	}
	end := p.scanLocation(start)
	if end == start {
		tok := p.lex(start)
		if tok.kind == tEOF {
			p.fail(start, "", "empty spec, want a location such as work or libc:malloc")
		}
		p.fail(start, tok.text, "unexpected %s, want a location such as work or libc:malloc", tok.describe())
	}

	// Split on ':' keeping each component's offset for errors; "::" is
	// C++ and Rust qualification (app::Server::handle), not a separator.
	var comps []comp
	pos := start
	for _, c := range splitColons(text[start:end]) {
		comps = append(comps, comp{c, pos})
		pos += len(c) + 1
	}
	if comps[0].s == "syscall" && len(comps) > 1 {
		p.syscallLocation(s, comps[1:], text[start:end])
		return end
	}
	if comps[0].s == "usdt" && len(comps) > 1 {
		p.usdtLocation(s, comps[1:], text[start:end])
		return end
	}
	if len(comps) > 1 {
		p.kernelType(comps, text[start:end])
	}
	explicit := false
	if k, ok := typeWords[comps[0].s]; ok && len(comps) > 1 {
		s.Kind, explicit = k, true
		comps = comps[1:]
	}
	if explicit && comps[0].s == "usdt" && len(comps) > 2 {
		p.fail(comps[0].pos-1, ":", "a USDT probe takes no type: write usdt:[object:]provider:name (it fires where the program placed it, and has no return)")
	}
	switch len(comps) {
	case 1:
	case 2:
		if comps[0].s == "" {
			p.fail(comps[0].pos, ":", "empty object name before ':'")
		}
		s.Object = comps[0].s
		comps = comps[1:]
	default:
		p.fail(comps[2].pos-1, ":", "too many ':' in location %q: want [type:][object:]function (paths containing ':' are not supported)", text[start:end])
	}
	sym, symPos := comps[0].s, comps[0].pos

	if base, ok := strings.CutSuffix(sym, "%return"); ok {
		if explicit && s.Kind == Entry {
			p.fail(symPos+len(base), "%return", "%%return contradicts the entry type")
		}
		s.Kind, sym = Return, base
	}
	if sym == "" {
		p.fail(symPos, "", "missing function name or address after %q", text[start:symPos])
	}
	if i := strings.LastIndexByte(sym, '+'); i >= 0 {
		off, err := parseLocNumber(sym[i+1:])
		if err != nil {
			p.fail(symPos+i+1, sym[i+1:], "bad offset %q: %v", sym[i+1:], err)
		}
		if s.Kind == Return {
			p.fail(symPos+i, sym[i:], "a return probe fires when the function returns: it takes no offset")
		}
		s.Offset, sym = off, sym[:i]
		if sym == "" {
			p.fail(symPos, "+", "missing function name before '+'")
		}
	}
	if isDigit(sym[0]) {
		if !strings.HasPrefix(sym, "0x") && !strings.HasPrefix(sym, "0X") {
			p.fail(symPos, sym, "symbol %q starts with a digit; write addresses in hex as 0x401136", sym)
		}
		if s.Offset != 0 || strings.Contains(comps[0].s, "+") {
			p.fail(symPos, sym, "an address takes no offset: add it to the address")
		}
		a, err := strconv.ParseUint(sym[2:], 16, 64)
		if err != nil {
			p.fail(symPos, sym, "bad address %q: %v", sym, numError(err))
		}
		if a == 0 {
			p.fail(symPos, sym, "address 0 cannot be probed")
		}
		s.Address = a
		return end
	}
	if i := badSymbolChar(sym); i >= 0 {
		p.fail(symPos+i, sym[i:i+1], "unexpected %q in function name %q", sym[i:i+1], sym)
	}
	s.Symbol = sym
	return end
}

// scanLocation returns the end of the location starting at start: the
// first white space or '(' outside brackets. A Go method symbol's receiver,
// main.(*T).M, is kept: its '(' follows a '.'.
func (p *parser) scanLocation(start int) int {
	text := p.text
	var stack []byte // open brackets
	for i := start; i < len(text); i++ {
		c := text[i]
		if isSpace(c) {
			if len(stack) > 0 {
				p.fail(i, "", "unclosed %q in location", string(stack[len(stack)-1]))
			}
			return i
		}
		switch c {
		case '[':
			stack = append(stack, c)
		case '=':
			if len(stack) == 0 && strings.HasPrefix(text[i:], "=>") {
				return i // work=>count()
			}
		case '(':
			if len(stack) == 0 && (i == start || text[i-1] != '.') {
				return i
			}
			stack = append(stack, c)
		case ']', ')':
			want := byte('[')
			if c == ')' {
				want = '('
			}
			if len(stack) == 0 || stack[len(stack)-1] != want {
				p.fail(i, string(c), "unbalanced %q in location", string(c))
			}
			stack = stack[:len(stack)-1]
		}
	}
	if len(stack) > 0 {
		p.fail(len(text), "", "unclosed %q in location", string(stack[len(stack)-1]))
	}
	return len(text)
}

// badSymbolChar returns the index of the first character that cannot be
// part of a function name or glob, or -1. Brackets (glob classes, Go
// generics) and Go receivers may hold anything scanLocation accepted.
func badSymbolChar(sym string) int {
	depth := 0
	for i := 0; i < len(sym); i++ {
		c := sym[i]
		switch {
		case c == '[' || c == '(':
			depth++
		case c == ']' || c == ')':
			depth--
		case depth > 0 || isAlnum(c) || c >= 0x80:
		case strings.IndexByte("_.$@*?/~<>", c) >= 0:
		case c == ':' && (strings.HasPrefix(sym[i:], "::") || i > 0 && sym[i-1] == ':'):
		default:
			return i
		}
	}
	return -1
}

// CutObject splits "object:symbol" at its first ':' that is not part of
// a "::" (C++ and Rust qualification); ok is false when there is none.
func CutObject(loc string) (object, symbol string, ok bool) {
	parts := splitColons(loc)
	if len(parts) < 2 {
		return "", loc, false
	}
	return parts[0], loc[len(parts[0])+1:], true
}

// splitColons splits s at every ':' that is not part of a "::".
func splitColons(s string) []string {
	var parts []string
	last := 0
	for i := 0; i < len(s); i++ {
		if s[i] != ':' {
			continue
		}
		if i+1 < len(s) && s[i+1] == ':' {
			i++ // "::"
			continue
		}
		parts = append(parts, s[last:i])
		last = i + 1
	}
	return append(parts, s[last:])
}

// parseLocNumber parses an offset: decimal, 0x hex or 0 octal.
func parseLocNumber(s string) (uint64, error) {
	if s == "" {
		return 0, errors.New("empty")
	}
	v, err := strconv.ParseUint(s, 0, 64)
	return v, numError(err)
}

// numError drops strconv's repetition of the input.
func numError(err error) error {
	var ne *strconv.NumError
	if errors.As(err, &ne) {
		return ne.Err
	}
	return err
}

// kernelType refuses bpftrace's kernel probe types with utap's nearest
// spelling: a bpftrace user types them by habit.
func (p *parser) kernelType(comps []comp, loc string) {
	c := comps[0]
	switch c.s {
	case "tracepoint", "t":
		if len(comps) == 3 && comps[1].s == "syscalls" {
			name := comps[2].s
			for _, pre := range []string{"sys_enter_", "sys_exit_"} {
				if rest, ok := strings.CutPrefix(name, pre); ok {
					p.fail(c.pos, c.s, "utap's system-call probes are syscall:NAME (one event per call, with its result): write syscall:%s for %s", rest, loc)
				}
			}
		}
		p.fail(c.pos, c.s, "kernel tracepoints are not utap's: it probes user space (system calls as syscall:NAME); bpftrace or perf trace them")
	case "kprobe", "kretprobe", "k", "kr", "kfunc", "kretfunc", "fentry", "fexit", "rawtracepoint", "rt", "hardware", "software", "profile", "interval":
		p.fail(c.pos, c.s, "%s: probes are bpftrace's: utap probes user-space functions (uprobe:, uretprobe:, entry:, return:) and system calls (syscall:NAME)", c.s)
	}
}
