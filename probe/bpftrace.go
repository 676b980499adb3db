package probe

import (
	"strconv"
	"strings"
)

// bpftraceShape reports whether text is written as a bpftrace program,
// LOC [/pred/] { ... }: it ends with a '}' and has a '{' outside quotes.
func bpftraceShape(text string) bool {
	t := strings.TrimSpace(text)
	return strings.HasSuffix(t, "}") && unquotedIndex(t, '{') > 0
}

// fromBpftrace reads a bpftrace one-liner with one aggregation,
//
//	[uprobe:|uretprobe:]LOC [/pred/] { @name[keys] = func(args); }
//
// as the utap spec LOC [if pred] => @name = func(args) [by keys], with
// bpftrace's argN as utap's arg(N+1) (bpftrace counts from arg0) and
// retval as ret. shifted says whether anything was renumbered.
func fromBpftrace(text string) (spec string, shifted bool, err error) {
	fail := func(col int, msg string) (string, bool, error) {
		return "", false, &ParseError{Text: text, Col: col + 1, Msg: msg}
	}
	open := unquotedIndex(text, '{')
	closing := strings.LastIndexByte(text, '}')
	head, body := strings.TrimSpace(text[:open]), text[open+1:closing]
	loc, pred, _ := strings.Cut(head, " ")
	for short, long := range map[string]string{"u:": "uprobe:", "ur:": "uretprobe:"} {
		if strings.HasPrefix(loc, short) {
			loc = long + loc[len(short):]
		}
	}
	if pred = strings.TrimSpace(pred); pred != "" {
		if len(pred) < 2 || pred[0] != '/' || pred[len(pred)-1] != '/' {
			return fail(strings.Index(text, pred), "want a bpftrace predicate /condition/ or '{' after the location")
		}
		pred = pred[1 : len(pred)-1]
	}
	var stmts []string
	for _, s := range splitUnquoted(body, ';') {
		if s = strings.TrimSpace(s); s != "" {
			stmts = append(stmts, s)
		}
	}
	const one = "a bpftrace-shaped spec takes one statement, @map[keys] = count() (or sum, min, max, avg, stats, hist, lhist); give another -e for another map, and fetches, e.g. libc:malloc(arg1), to print values"
	if len(stmts) != 1 || !strings.HasPrefix(stmts[0], "@") {
		return fail(open, one)
	}
	st := stmts[0]
	i := 1
	for i < len(st) && isAlnum(st[i]) {
		i++
	}
	name := st[:i]
	var keys string
	rest := strings.TrimSpace(st[i:])
	if strings.HasPrefix(rest, "[") {
		end := unquotedIndex(rest, ']')
		if end < 0 {
			return fail(open, "unclosed '[' after "+name)
		}
		keys, rest = rest[1:end], strings.TrimSpace(rest[end+1:])
	}
	value, ok := strings.CutPrefix(rest, "=")
	if !ok || strings.HasPrefix(value, "=") {
		return fail(open, one)
	}
	var s1, s2, s3 bool
	pred, s1 = shiftArgs(pred)
	value, s2 = shiftArgs(strings.TrimSpace(value))
	keys, s3 = shiftArgs(strings.TrimSpace(keys))
	var b strings.Builder
	b.WriteString(loc)
	if pred != "" {
		b.WriteString(" if ")
		b.WriteString(pred)
	}
	b.WriteString(" => ")
	b.WriteString(name)
	b.WriteString(" = ")
	b.WriteString(value)
	if keys != "" {
		b.WriteString(" by ")
		b.WriteString(keys)
	}
	return b.String(), s1 || s2 || s3, nil
}

// shiftArgs renumbers argN as arg(N+1) and retval as ret outside quotes.
func shiftArgs(s string) (string, bool) {
	var b strings.Builder
	shifted := false
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\'':
			end := quoteEnd(s, i)
			if end < 0 {
				end = len(s)
			}
			b.WriteString(s[i:end])
			i = end
		case isIdentStart(c):
			end := i + 1
			for end < len(s) && isAlnum(s[end]) {
				end++
			}
			word := s[i:end]
			if n, err := strconv.Atoi(strings.TrimPrefix(word, "arg")); err == nil && strings.HasPrefix(word, "arg") && n >= 0 {
				word, shifted = "arg"+strconv.Itoa(n+1), true
			} else if word == "retval" {
				word, shifted = "ret", true
			}
			b.WriteString(word)
			i = end
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), shifted
}

// unquotedIndex is the index of the first c in s outside quotes, or -1.
func unquotedIndex(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"', '\'':
			if end := quoteEnd(s, i); end > 0 {
				i = end - 1
			}
		case c:
			return i
		}
	}
	return -1
}

// splitUnquoted splits s at every sep outside quotes.
func splitUnquoted(s string, sep byte) []string {
	var out []string
	for {
		i := unquotedIndex(s, sep)
		if i < 0 {
			return append(out, s)
		}
		out = append(out, s[:i])
		s = s[i+1:]
	}
}
