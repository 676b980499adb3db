package ssol

import (
	"fmt"

	"golang.org/x/arch/x86/x86asm"
)

// Len returns the length of the instruction at the start of code (which
// should hold up to 15 bytes). It is used to walk instruction boundaries
// forward from a function's start: a probe is only ever placed at one.
func Len(code []byte) (int, error) {
	if isEndbr(code) {
		return 4, nil
	}
	inst, err := x86asm.Decode(code, 64)
	// x86asm reports {Len: 1, Op: 0} with a nil error for prefixes it
	// cannot follow (rdsspq, rdpid...): its length is not to be trusted.
	if err != nil || inst.Op == 0 {
		return 0, fmt.Errorf("%w: % x", ErrDecode, code[:min(len(code), 15)])
	}
	return inst.Len, nil
}

// isEndbr matches endbr64 (f3 0f 1e fa) and endbr32 (f3 0f 1e fb), which
// x86asm decodes as a 1-byte unknown instruction.
func isEndbr(code []byte) bool {
	return len(code) >= 4 && code[0] == 0xf3 && code[1] == 0x0f && code[2] == 0x1e &&
		(code[3] == 0xfa || code[3] == 0xfb)
}
