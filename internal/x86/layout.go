package x86

import "errors"

// Layout locates the parts of an encoding that relocation, emulation and
// the uprobe engine's refusals look at. x86asm does not expose them for
// VEX/EVEX (it reports their RIP-relative operands as absolute) nor for
// 67-prefixed RIP-relative operands, so we find them ourselves, as gdb's
// amd64_get_insn_details does. Offsets are from the instruction's start.
type Layout struct {
	Rex    int // offset of the REX prefix, -1 if none
	VEX    int // offset of the c5/c4/62 byte, -1 if none
	VEXLen int // 2, 3 or 4 bytes (c5, c4, 62)
	OpMap  int // 0: one-byte, 1: 0f, 2: 0f 38, 3: 0f 3a
	Op     int // offset of the opcode byte
	ModRM  int // offset of ModRM, -1 if the instruction has none

	P66, P67, Lock, Rep, RepNE bool
	Seg                        byte // last segment override prefix, 0 if none
	NPfx                       int  // number of legacy prefixes
}

var (
	errAPX       = errors.New("APX REX2 (d5) encoding")
	errPrefixes  = errors.New("prefixes beyond the 15-byte limit or after REX")
	errVEXPrefix = errors.New("legacy 66/f2/f3/f0 or REX prefix before VEX/EVEX")
	errVEXMap    = errors.New("unsupported VEX/EVEX opcode map")
	errTruncated = errors.New("truncated instruction")
)

// Locate walks prefixes and escapes up to the opcode and ModRM.
func Locate(code []byte) (Layout, error) {
	l := Layout{Rex: -1, VEX: -1, ModRM: -1}
	i := 0
prefixes:
	for ; i < len(code) && i < 15; i++ {
		switch b := code[i]; b {
		case 0x26, 0x2e, 0x36, 0x3e, 0x64, 0x65:
			l.Seg = b
		case 0x66:
			l.P66 = true
		case 0x67:
			l.P67 = true
		case 0xf0:
			l.Lock = true
		case 0xf2:
			l.RepNE = true
		case 0xf3:
			l.Rep = true
		default:
			break prefixes
		}
		l.NPfx++
	}
	if i >= len(code) || i >= 15 {
		return l, errTruncated
	}
	if code[i]&0xf0 == 0x40 {
		l.Rex = i
		i++
		if i >= len(code) {
			return l, errTruncated
		}
		if IsLegacyPrefix(code[i]) || code[i]&0xf0 == 0x40 {
			// The CPU ignores a REX that is not last; refuse
			// rather than guess which one x86asm honours.
			return l, errPrefixes
		}
	}
	switch code[i] {
	case 0xd5:
		return l, errAPX
	case 0xc5, 0xc4, 0x62:
		if l.P66 || l.Lock || l.Rep || l.RepNE || l.Rex >= 0 {
			return l, errVEXPrefix
		}
		l.VEX = i
		switch code[i] {
		case 0xc5:
			l.VEXLen, l.OpMap = 2, 1
		case 0xc4:
			l.VEXLen = 3
			if i+1 < len(code) {
				l.OpMap = int(code[i+1] & 0x1f)
			}
		case 0x62:
			l.VEXLen = 4
			if i+1 < len(code) {
				l.OpMap = int(code[i+1] & 0x07)
			}
		}
		if l.OpMap < 1 || l.OpMap > 3 {
			return l, errVEXMap
		}
		l.Op = i + l.VEXLen
		if l.Op >= len(code) {
			return l, errTruncated
		}
		// Every VEX/EVEX instruction has ModRM except vzeroupper/vzeroall.
		if !(l.OpMap == 1 && code[l.Op] == 0x77) {
			l.ModRM = l.Op + 1
		}
	case 0x0f:
		i++
		if i >= len(code) {
			return l, errTruncated
		}
		switch code[i] {
		case 0x38:
			l.OpMap, l.Op = 2, i+1
			l.ModRM = i + 2
		case 0x3a:
			l.OpMap, l.Op = 3, i+1
			l.ModRM = i + 2
		default:
			l.OpMap, l.Op = 1, i
			if bit(twoByteModRM, code[i]) {
				l.ModRM = i + 1
			}
		}
	default:
		l.Op = i
		if bit(oneByteModRM, code[i]) {
			l.ModRM = i + 1
		}
	}
	if l.ModRM >= len(code) || l.Op >= len(code) {
		return l, errTruncated
	}
	return l, nil
}

// IsLegacyPrefix reports whether b is one of the legacy prefixes.
func IsLegacyPrefix(b byte) bool {
	switch b {
	case 0x26, 0x2e, 0x36, 0x3e, 0x64, 0x65, 0x66, 0x67, 0xf0, 0xf2, 0xf3:
		return true
	}
	return false
}

// RipRel reports whether the ModRM operand is [rip+disp32]: mod 00, rm 101,
// whatever REX.B says.
func (l *Layout) RipRel(code []byte) bool {
	return l.ModRM >= 0 && code[l.ModRM]&0xc7 == 0x05
}

// ModRMEnd is the offset just past ModRM, SIB and displacement.
func (l *Layout) ModRMEnd(code []byte) int {
	m := code[l.ModRM]
	mod, rm := m>>6, m&7
	end := l.ModRM + 1
	if mod == 3 {
		return end
	}
	if rm == 4 {
		end++ // SIB
		if mod == 0 && end-1 < len(code) && code[end-1]&7 == 5 {
			return end + 4 // no base: disp32
		}
	}
	switch {
	case mod == 0 && rm == 5:
		end += 4
	case mod == 1:
		end++
	case mod == 2:
		end += 4
	}
	return end
}

// Opcode returns the opcode byte.
func (l *Layout) Opcode(code []byte) byte { return code[l.Op] }

// Reg returns ModRM.reg (3 bits, without REX.R).
func (l *Layout) Reg(code []byte) int { return int(code[l.ModRM]>>3) & 7 }

// RexBit returns the REX bit selected by mask (8 W, 4 R, 2 X, 1 B) as 0 or 1.
func (l *Layout) RexBit(code []byte, mask byte) int {
	if l.Rex < 0 || code[l.Rex]&mask == 0 {
		return 0
	}
	return 1
}

// VVVV returns the low three bits of VEX/EVEX.vvvv (un-inverted), the
// second register operand that a scratch register must not clash with;
// -1 without VEX.
func (l *Layout) VVVV(code []byte) int {
	var b byte
	switch l.VEXLen {
	case 2:
		b = code[l.VEX+1]
	case 3, 4:
		b = code[l.VEX+2]
	default:
		return -1
	}
	return int(^b>>3) & 7
}

func bit(table [8]uint32, b byte) bool { return table[b>>5]&(1<<(b&31)) != 0 }

// rows builds a 256-bit table from 16 rows of 16 '0'/'1' flags, so the
// tables below read like the opcode map.
func rows(r [16]string) (t [8]uint32) {
	for hi, s := range r {
		for lo := 0; lo < 16; lo++ {
			if s[lo] == '1' {
				b := hi<<4 | lo
				t[b>>5] |= 1 << (b & 31)
			}
		}
	}
	return t
}

// oneByteModRM: which one-byte opcodes (64-bit mode) take a ModRM byte.
var oneByteModRM = rows([16]string{
	//0123456789abcdef
	"1111000011110000", // 00
	"1111000011110000", // 10
	"1111000011110000", // 20
	"1111000011110000", // 30
	"0000000000000000", // 40 REX
	"0000000000000000", // 50
	"0011000001010000", // 60 (62 EVEX, 63 movsxd, 69, 6b imul)
	"0000000000000000", // 70
	"1111111111111111", // 80
	"0000000000000000", // 90
	"0000000000000000", // a0
	"0000000000000000", // b0
	"1100111100000000", // c0
	"1111000011111111", // d0
	"0000000000000000", // e0
	"0000001100000011", // f0
})

// twoByteModRM: which 0f xx opcodes take a ModRM byte.
var twoByteModRM = rows([16]string{
	//0123456789abcdef
	"1111000000000101", // 00 (0d prefetch, 0f 3dnow)
	"1111111111111111", // 10
	"1111000011111111", // 20
	"0000000000000000", // 30
	"1111111111111111", // 40 cmovcc
	"1111111111111111", // 50
	"1111111111111111", // 60
	"1111111011111111", // 70 (77 emms)
	"0000000000000000", // 80 jcc rel32
	"1111111111111111", // 90 setcc
	"0001110000011111", // a0
	"1111111111111111", // b0
	"1111111100000000", // c0 (c8-cf bswap)
	"1111111111111111", // d0
	"1111111111111111", // e0
	"1111111111111111", // f0
})
