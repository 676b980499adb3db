package output

import (
	"encoding/binary"
	"math/bits"
	"strconv"
	"strings"
	"unsafe"

	"github.com/utap/utap/internal/dec"
	"github.com/utap/utap/probe"
)

// formatValue renders v as text: integers per their format, strings quoted
// and escaped as strace does, cut at strLen with "..." after the quote.
func formatValue(b []byte, v *probe.Value, strLen int) []byte {
	switch {
	case v.Err:
		return append(b, '?')
	case v.Null:
		return append(b, "NULL"...)
	case v.Name != "":
		return append(b, v.Name...)
	case v.Format == probe.FormatBitvec:
		return appendBitvec(b, bitvecBytes(v))
	case v.IsStr:
		return quote(b, cstr(v), strLen)
	}
	switch v.Format {
	case probe.FormatVoid:
		return append(b, "<void>"...)
	case probe.FormatBool:
		if v.Int == 0 {
			return append(b, "false"...)
		}
		return append(b, "true"...)
	case probe.FormatOctal:
		// ltrace's "0%o": 0 is "00".
		return strconv.AppendUint(append(b, '0'), v.Int, 8)
	case probe.FormatChar:
		return appendChar(b, byte(v.Int))
	case probe.FormatHex, probe.FormatPointer:
		if v.Int == 0 && v.Format == probe.FormatPointer {
			return append(b, "NULL"...)
		}
		return appendHex(append(b, "0x"...), v.Int)
	case probe.FormatGuess:
		return appendGuess(b, v.Int)
	case probe.FormatUnsigned:
		return dec.AppendUint(b, v.Int)
	case probe.FormatDec:
		return dec.AppendInt(b, int64(v.Int))
	}
	if v.Signed {
		return dec.AppendInt(b, int64(v.Int))
	}
	return dec.AppendUint(b, v.Int)
}

// appendGuess writes u as ltrace guesses an untyped value
// (FormatGuess): small numbers in decimal, others in hex.
func appendGuess(b []byte, u uint64) []byte {
	if n := int64(u); n >= -10000 && n <= 10000 {
		return dec.AppendInt(b, n)
	}
	return appendHex(append(b, "0x"...), u)
}

// appendBitvec writes the set bits of set (little endian), as ltrace
// shows a bitvec: <1,12>, runs as ranges <31-32>; when more than half
// are set, the others after a ~: sigfillset's ~<31-32>.
func appendBitvec(b []byte, set []byte) []byte {
	n, on := 8*len(set), 0
	for _, c := range set {
		on += bits.OnesCount8(c)
	}
	want := byte(1)
	if 2*on > n {
		b, want = append(b, '~'), 0
	}
	b = append(b, '<')
	first := true
	for i := 0; i < n; {
		if bit(set, i) != want {
			i++
			continue
		}
		j := i
		for j+1 < n && bit(set, j+1) == want {
			j++
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = strconv.AppendInt(b, int64(i), 10)
		if j > i {
			b = strconv.AppendInt(append(b, '-'), int64(j), 10)
		}
		i = j + 1
	}
	return append(b, '>')
}

// bit is bit i of set, little endian.
func bit(set []byte, i int) byte { return set[i/8] >> (i % 8) & 1 }

// bitvecBytes is a FormatBitvec value's bit set: a buffer's bytes, or
// an integer's, little endian.
func bitvecBytes(v *probe.Value) []byte {
	if v.IsStr {
		return []byte(v.Str)
	}
	return binary.LittleEndian.AppendUint64(nil, v.Int)
}

// appendBitList writes the set bits of set as a JSON array: [1,12].
func appendBitList(b []byte, set []byte) []byte {
	b = append(b, '[')
	for i := range 8 * len(set) {
		if bit(set, i) != 0 {
			if b[len(b)-1] != '[' {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(i), 10)
		}
	}
	return append(b, ']')
}

// cstr is v's string as it shows: up to its first NUL for FormatCStr
// (ltrace's string[N]), else whole.
func cstr(v *probe.Value) string {
	if v.Format == probe.FormatCStr {
		if i := strings.IndexByte(v.Str, 0); i >= 0 {
			return v.Str[:i]
		}
	}
	return v.Str
}

// plain marks the bytes a quoted string shows as they are.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// plainRun is the end of the run of plain bytes of s from i, found eight
// bytes at a time while they all are: byte by byte, the run was a fifth
// of a str() trace's drainer.
func plainRun(s string, i int) int {
	for ; i+8 <= len(s); i += 8 {
		// An unaligned load: x86-64's loads take any address.
		if !plain8(*(*uint64)(unsafe.Pointer(unsafe.StringData(s[i:])))) {
			break
		}
	}
	for i < len(s) && plain[s[i]] {
		i++
	}
	return i
}

const ones, highs = 0x0101010101010101, 0x8080808080808080

// plain8 says whether the eight bytes of x are all plain: none below
// 0x20, none above 0x7e, none a '"' or a '\\' (the bit tricks of
// Anderson's Bit Twiddling Hacks: hasless, hasmore, haszero).
func plain8(x uint64) bool {
	zero := func(v uint64) uint64 { return (v - ones) &^ v & highs }
	below := (x - 0x20*ones) &^ x & highs
	above := (x + ones | x) & highs
	return below|above|zero(x^'"'*ones)|zero(x^'\\'*ones) == 0
}

func quote(b []byte, s string, strLen int) []byte {
	cut := len(s) > strLen
	if cut {
		s = s[:strLen]
	}
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		// A run of plain bytes in one append: most strings are one.
		if j := plainRun(s, i); j > i {
			b = append(b, s[i:j]...)
			if i = j; i == len(s) {
				break
			}
		}
		c := s[i]
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, `\n`...)
		case '\t':
			b = append(b, `\t`...)
		case '\r':
			b = append(b, `\r`...)
		case '\a':
			b = append(b, `\a`...)
		case '\b':
			b = append(b, `\b`...)
		case '\f':
			b = append(b, `\f`...)
		case '\v':
			b = append(b, `\v`...)
		case 0:
			b = append(b, `\0`...)
		default:
			if c < 0x20 || c >= 0x7f {
				// Three octal digits, as ltrace: \033, \177.
				b = append(b, '\\', '0'+c>>6, '0'+c>>3&7, '0'+c&7)
			} else {
				b = append(b, c)
			}
		}
	}
	b = append(b, '"')
	if cut {
		b = append(b, "..."...)
	}
	return b
}

// jsonValue renders v for JSON lines: a number for decimal integers, a
// "0x.." string for hex and pointers, a string for strings, null when the
// read faulted.
func jsonValue(b []byte, v *probe.Value) []byte {
	switch {
	case v.Err, v.Null:
		return append(b, "null"...)
	case v.Format == probe.FormatBitvec:
		return appendBitList(b, bitvecBytes(v))
	case v.IsStr:
		return appendJSONString(b, cstr(v))
	case v.Format == probe.FormatVoid:
		return append(b, "null"...)
	case v.Format == probe.FormatBool:
		return formatValue(b, v, 0)
	case v.Format == probe.FormatOctal || v.Format == probe.FormatChar:
		return dec.AppendUint(b, v.Int)
	case v.Format == probe.FormatHex || v.Format == probe.FormatPointer:
		b = append(b, `"0x`...)
		b = appendHex(b, v.Int)
		return append(b, '"')
	case v.Name != "":
		return appendJSONString(b, v.Name) // an enum's or a flag's name
	case v.Format == probe.FormatGuess:
		// ltrace's guess, as the text shows it: decimal near zero, else
		// hex (a "0x.." string: JSON has no hex numbers).
		if n := int64(v.Int); n >= -10000 && n <= 10000 {
			return dec.AppendInt(b, n)
		}
		b = append(b, `"0x`...)
		b = appendHex(b, v.Int)
		return append(b, '"')
	case v.Format == probe.FormatDec:
		return dec.AppendInt(b, int64(v.Int))
	case v.Format == probe.FormatUnsigned:
		return dec.AppendUint(b, v.Int)
	}
	// The usual value, without formatValue's cases on the way.
	if v.Signed {
		return dec.AppendInt(b, int64(v.Int))
	}
	return dec.AppendUint(b, v.Int)
}

// appendChar shows a character as ltrace does: 'a', '\n', '\0'.
func appendChar(b []byte, c byte) []byte {
	q := quote(nil, string([]byte{c}), 1)
	if c == '\'' {
		q = []byte(`"\'"`)
	} else if c == '"' {
		q = []byte(`"""`)
	}
	b = append(b, '\'')
	b = append(b, q[1:len(q)-1]...)
	return append(b, '\'')
}
