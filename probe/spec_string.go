package probe

import (
	"strconv"
	"strings"
)

// String prints s in canonical form: Parse(s.String()) gives the same Spec
// (but Text) and the same canonical string. Entry probes carry no type
// prefix unless the object's name is itself a type word.
func (s *Spec) String() string {
	var b strings.Builder
	if s.Syscall {
		b.WriteString("syscall:")
		b.WriteString(s.Symbol)
		s.writeTail(&b)
		return b.String()
	}
	if _, ok := typeWords[s.Object]; s.Provider == "" && (s.Kind == Return || ok || s.Object == "usdt") {
		b.WriteString(s.Kind.String())
		b.WriteByte(':')
	}
	if s.Provider != "" {
		b.WriteString("usdt:")
	}
	if s.Object != "" {
		b.WriteString(s.Object)
		b.WriteByte(':')
	}
	if s.Provider != "" {
		b.WriteString(s.Provider)
		b.WriteByte(':')
		b.WriteString(s.Symbol)
	} else if s.Symbol != "" {
		b.WriteString(s.Symbol)
		if s.Offset != 0 {
			b.WriteString("+0x")
			b.WriteString(strconv.FormatUint(s.Offset, 16))
		}
	} else {
		b.WriteString("0x")
		b.WriteString(strconv.FormatUint(s.Address, 16))
	}
	s.writeTail(&b)
	return b.String()
}

// writeTail prints the fetches and the condition.
func (s *Spec) writeTail(b *strings.Builder) {
	if len(s.Fetches) > 0 && s.Agg == nil {
		if strings.HasSuffix(b.String(), ".") {
			// ".(" would read as a Go receiver, main.(*T).M.
			b.WriteByte(' ')
		}
		b.WriteByte('(')
		for i, f := range s.Fetches {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(f.String())
		}
		b.WriteByte(')')
	}
	if s.Cond != nil {
		b.WriteString(" if ")
		b.WriteString(s.Cond.String())
	}
	if s.Agg != nil {
		b.WriteByte(' ')
		b.WriteString(s.Agg.String(s))
	}
}

// String prints the fetch as expr[:format].
func (f Fetch) String() string {
	if f.Format == FormatDefault {
		return f.Expr.String()
	}
	return f.Expr.String() + ":" + string(rune(f.Format))
}
