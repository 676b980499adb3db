//go:build linux && amd64

package syscalls

import "strings"

// pathMax bounds paths, which strace prints whole whatever -s says.
const pathMax = 4096

// quoter quotes as quote does, every byte in hex when true (strace -xx,
// Options.Hex).
type quoter bool

func (h quoter) quote(b []byte, max int, nulTerm, forceHex bool) string {
	return quote(b, max, nulTerm, forceHex || bool(h))
}

// quote is strace's string_quote plus the ellipsis printstr adds: at
// most max bytes of b, NUL-terminated strings stop at their NUL, and
// `...` follows the closing quote when bytes were left out.
func quote(b []byte, max int, nulTerm, forceHex bool) string {
	more := false
	if nulTerm {
		if i := indexNUL(b); i >= 0 && i <= max {
			b = b[:i]
		} else if len(b) > max {
			b, more = b[:max], true
		}
	} else if len(b) > max {
		b, more = b[:max], true
	}
	var s strings.Builder
	s.Grow(len(b) + 5)
	s.WriteByte('"')
	for i, c := range b {
		if forceHex {
			s.WriteString(`\x`)
			s.WriteByte(hexDigits[c>>4])
			s.WriteByte(hexDigits[c&15])
			continue
		}
		switch c {
		case '"', '\\':
			s.WriteByte('\\')
			s.WriteByte(c)
		case '\f':
			s.WriteString(`\f`)
		case '\n':
			s.WriteString(`\n`)
		case '\r':
			s.WriteString(`\r`)
		case '\t':
			s.WriteString(`\t`)
		case '\v':
			s.WriteString(`\v`)
		default:
			if c >= ' ' && c <= 0x7e {
				s.WriteByte(c)
				continue
			}
			// Shortest octal, unless a digit follows and would be
			// read as part of the escape.
			s.WriteByte('\\')
			if i+1 < len(b) && b[i+1] >= '0' && b[i+1] <= '7' {
				s.WriteByte('0' + c>>6)
				s.WriteByte('0' + (c>>3)&7)
			} else if c>>3 != 0 {
				if c>>6 != 0 {
					s.WriteByte('0' + c>>6)
				}
				s.WriteByte('0' + (c>>3)&7)
			}
			s.WriteByte('0' + c&7)
		}
	}
	s.WriteByte('"')
	if more {
		s.WriteString("...")
	}
	return s.String()
}

const hexDigits = "0123456789abcdef"

func indexNUL(b []byte) int {
	for i, c := range b {
		if c == 0 {
			return i
		}
	}
	return -1
}
