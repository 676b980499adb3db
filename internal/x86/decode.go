package x86

import (
	"errors"
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
	if IsEndbr(code) {
		return x86asm.Inst{Op: x86asm.NOP, Len: 4, Mode: 64}, nil
	}
	l, err := Locate(code)
	if err != nil {
		return x86asm.Inst{}, fmt.Errorf("%w: % x: %v", ErrDecode, code, err)
	}
	inst, err := x86asm.Decode(code, 64)
	if err != nil || inst.Op == 0 {
		return x86asm.Inst{}, fmt.Errorf("%w: % x", ErrDecode, code)
	}
	if l.VEX >= 0 && l.ModRM < 0 {
		// x86asm gives vzeroupper/vzeroall (c5 f8/fc 77) a ModRM byte
		// they do not have; they are common before every AVX function's
		// ret, so trust our locator here rather than refuse.
		inst.Len = l.Op + 1
	}
	if l.Op >= inst.Len || (l.ModRM >= 0 && l.ModRMEnd(code) > inst.Len) {
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
	l, err := Locate(code)
	return err == nil && !l.P66
}

// Rets returns the offsets of the near returns (IsRet) in a function's
// code, decoding forward from its start. An undecodable instruction, or one
// running past the end of code, is a *WalkError (wrapping ErrDecode) and no
// offsets: skipping a byte could resynchronise on a false c3 in the middle
// of an instruction, and a breakpoint there would corrupt it.
//
// Linear decoding assumes the body holds only instructions. Go's compiler
// never puts data in a function; gcc and clang keep jump tables in .rodata
// on x86-64, but hand-written assembly may embed data.
func Rets(code []byte) ([]int, error) {
	var rets []int
	for off := 0; off < len(code); {
		inst, err := Decode(code[off:])
		if err != nil {
			return nil, &WalkError{Off: off, Err: err}
		}
		if off+inst.Len > len(code) {
			return nil, &WalkError{Off: off, Err: fmt.Errorf("%w: the instruction runs past the end of the code: % x", ErrDecode, code[off:])}
		}
		if IsRet(code[off : off+inst.Len]) {
			rets = append(rets, off)
		}
		off += inst.Len
	}
	return rets, nil
}

// WalkError says where a walk over code (Rets) met what it cannot decode.
type WalkError struct {
	Off int   // offset of the instruction from the code's start
	Err error // wraps ErrDecode
}

func (e *WalkError) Error() string { return fmt.Sprintf("at offset %#x: %v", e.Off, e.Err) }
func (e *WalkError) Unwrap() error { return e.Err }

// ErrDecode: the bytes are not an instruction this package can walk over.
var ErrDecode = errors.New("cannot decode instruction")

// IsEndbr matches endbr64 (f3 0f 1e fa) and endbr32 (f3 0f 1e fb), which
// x86asm decodes as a 1-byte unknown instruction.
func IsEndbr(code []byte) bool {
	return len(code) >= 4 && code[0] == 0xf3 && code[1] == 0x0f && code[2] == 0x1e &&
		(code[3] == 0xfa || code[3] == 0xfb)
}
