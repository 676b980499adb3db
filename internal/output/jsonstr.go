package output

import (
	"encoding/binary"
	"math/bits"
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

// appendHex appends u in lowercase hex, no prefix: eight digits at a
// time in a word, no loop nor table (strconv's general path costs more,
// and pointers are in most events).
func appendHex(b []byte, u uint64) []byte {
	n := max(1, (bits.Len64(u)+3)/4)
	var d [16]byte
	binary.BigEndian.PutUint64(d[:8], hex8(uint32(u>>32)))
	binary.BigEndian.PutUint64(d[8:], hex8(uint32(u)))
	return append(b, d[16-n:]...)
}

// hex8 is v's eight hex digits, the first in the top byte.
func hex8(v uint32) uint64 {
	// A nibble a byte, the most significant highest.
	x := uint64(v)
	x = (x | x<<16) & 0x0000ffff0000ffff
	x = (x | x<<8) & 0x00ff00ff00ff00ff
	x = (x | x<<4) & 0x0f0f0f0f0f0f0f0f
	// '0'+c, and 'a'-'0'-10 more where c > 9.
	letters := (x + 0x0606060606060606) >> 4 & 0x0101010101010101
	return x + 0x3030303030303030 + letters*('a'-'0'-10)
}
