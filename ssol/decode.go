package ssol

import (
	"fmt"

	"golang.org/x/arch/x86/x86asm"
)

// Decode decodes the 64-bit instruction at the start of code (up to 15
// bytes are looked at). It is x86asm.Decode made safe for walking code:
//   - endbr64/endbr32, which x86asm cannot decode, come back as a 4-byte NOP;
//   - vzeroupper/vzeroall are 3 bytes (x86asm says 4);
//   - x86asm's {Op: 0, Len: 1} answer for prefixes it cannot follow, APX
//     (d5) encodings, and encodings whose ModRM/displacement our own locator
//     places beyond x86asm's length are errors wrapping ErrDecode.
//
// Len(code) is Decode(code).Len.
func Decode(code []byte) (x86asm.Inst, error) {
	code = code[:min(len(code), 15)]
	if isEndbr(code) {
		return x86asm.Inst{Op: x86asm.NOP, Len: 4, Mode: 64}, nil
	}
	l, err := locate(code)
	if err != nil {
		return x86asm.Inst{}, fmt.Errorf("%w: % x: %v", ErrDecode, code, err)
	}
	inst, err := x86asm.Decode(code, 64)
	if err != nil || inst.Op == 0 {
		return x86asm.Inst{}, fmt.Errorf("%w: % x", ErrDecode, code)
	}
	if l.vex >= 0 && l.modrm < 0 {
		// x86asm gives vzeroupper/vzeroall (c5 f8/fc 77) a ModRM byte
		// they do not have; they are common before every AVX function's
		// ret, so trust our locator here rather than refuse.
		inst.Len = l.op + 1
	}
	if l.op >= inst.Len || (l.modrm >= 0 && l.modrmEnd(code) > inst.Len) {
		return x86asm.Inst{}, fmt.Errorf("%w: % x: x86asm says %d bytes, the operand encoding needs more",
			ErrDecode, code, inst.Len)
	}
	return inst, nil
}

// IsRet reports whether code starts with a near return (c3, c2 imm16,
// including rep/bnd-prefixed forms; not the 66-prefixed 16-bit one).
// Return probes put a breakpoint on every such instruction of a function.
func IsRet(code []byte) bool {
	inst, err := Decode(code)
	if err != nil || inst.Op != x86asm.RET {
		return false
	}
	l, err := locate(code)
	return err == nil && !l.p66
}

// Rets returns the offsets of the near returns in a function's code,
// decoding forward from its start. It stops at the first undecodable
// instruction and returns what it found with the error.
func Rets(code []byte) ([]int, error) {
	var rets []int
	for off := 0; off < len(code); {
		inst, err := Decode(code[off:])
		if err != nil {
			return rets, fmt.Errorf("at offset %#x: %w", off, err)
		}
		if IsRet(code[off : off+inst.Len]) {
			rets = append(rets, off)
		}
		off += inst.Len
	}
	return rets, nil
}

// isEndbr matches endbr64 (f3 0f 1e fa) and endbr32 (f3 0f 1e fb), which
// x86asm decodes as a 1-byte unknown instruction.
func isEndbr(code []byte) bool {
	return len(code) >= 4 && code[0] == 0xf3 && code[1] == 0x0f && code[2] == 0x1e &&
		(code[3] == 0xfa || code[3] == 0xfb)
}
