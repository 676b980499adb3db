package agg

import (
	"fmt"
	"strconv"
	"strings"
)

// AppendJSON appends m as one line of bpftrace's JSON output (-f json):
// {"type": "map"|"hist"|"stats", "data": {"@name": ...}}, keys joined by
// ",", entries in the order text shows them.
func (m *Map) AppendJSON(b []byte) []byte {
	typ := "map"
	switch m.Kind.Func {
	case Hist, LHist:
		typ = "hist"
	case Avg, Stats:
		typ = "stats"
	}
	b = fmt.Appendf(b, `{"type": %q, "data": {%s: `, typ, quoteJSON(m.Name))
	entries := m.Entries()
	if len(entries) == 1 && len(entries[0].Key) == 0 {
		b = m.appendJSONValue(b, entries[0].State)
	} else if len(entries) == 0 && (m.Kind.Func == Count || m.Kind.Func == Sum) {
		b = append(b, '0')
	} else {
		b = append(b, '{')
		for i, e := range entries {
			if i > 0 {
				b = append(b, ", "...)
			}
			var k []byte
			for j, p := range e.Key {
				if j > 0 {
					k = append(k, ',')
				}
				k = append(k, p.text()...)
			}
			b = append(b, quoteJSON(string(k))...)
			b = append(b, ": "...)
			b = m.appendJSONValue(b, e.State)
		}
		b = append(b, '}')
	}
	return append(b, "}}\n"...)
}

func (m *Map) appendJSONValue(b []byte, s State) []byte {
	switch m.Kind.Func {
	case Stats:
		return fmt.Appendf(b, `{"count": %d, "average": %d, "total": %d}`, s.Count, m.Kind.Value(s), s.Sum)
	case Hist, LHist:
		b = append(b, '[')
		lo, hi := shown(s)
		for i := lo; lo >= 0 && i <= hi; i++ {
			if i > lo {
				b = append(b, ", "...)
			}
			min, max, hasMin, hasMax := m.Kind.Range(i)
			b = append(b, '{')
			if hasMin {
				b = fmt.Appendf(b, `"min": %d, `, min)
			}
			if hasMax {
				b = fmt.Appendf(b, `"max": %d, `, max)
			}
			b = fmt.Appendf(b, `"count": %d}`, s.Buckets[i])
		}
		return append(b, ']')
	}
	return strconv.AppendInt(b, m.Kind.Value(s), 10)
}

// quoteJSON quotes s as a JSON string.
func quoteJSON(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r < 0x20:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
