package output

import (
	"math/bits"
	"slices"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string. strconv.Quote is not JSON
// (it writes \x00), and encoding/json allocates per call.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	if plainJSON(s) {
		// Names and most strings: one copy, not a byte at a time.
		b = append(b, s...)
		return append(b, '"')
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, `\n`...)
			case c == '\t':
				b = append(b, `\t`...)
			case c == '\r':
				b = append(b, `\r`...)
			case c < 0x20 || c == 0x7f:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// plainJSON says whether s needs no escape: printable ASCII, no '"' or '\\'.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// appendHex appends u in lowercase hex, no prefix, two digits a step:
// strconv's general path costs more, and pointers are in most events.
func appendHex(b []byte, u uint64) []byte {
	// Straight into b: its digits counted first.
	n := max(1, (bits.Len64(u)+3)/4)
	b = slices.Grow(b, n)
	buf := b[len(b) : len(b)+n]
	i := n
	for u >= 0x100 {
		p := u & 0xff * 2
		i -= 2
		buf[i], buf[i+1] = hexPairs[p], hexPairs[p+1]
		u >>= 8
	}
	if u >= 0x10 {
		i -= 2
		buf[i], buf[i+1] = hexPairs[2*u], hexPairs[2*u+1]
	} else {
		i--
		buf[i] = hexDigits[u]
	}
	return b[:len(b)+n]
}

// hexPairs is "000102…ff": byte n's two digits at 2n.
var hexPairs = func() (t [512]byte) {
	for n := range 256 {
		t[2*n], t[2*n+1] = hexDigits[n>>4], hexDigits[n&0xf]
	}
	return t
}()
