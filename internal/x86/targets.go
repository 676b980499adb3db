package x86

import "golang.org/x/arch/x86/x86asm"

// Targets calls add with every address code (at runtime address addr) may
// send control to as far as its bytes say: the target of each direct
// branch (jmp, jcc, call, loop, jrcxz, xbegin) and each RIP-relative
// operand's address (a lea of a label is how code takes a code address:
// a callback, a computed goto, a table of handlers). The caller keeps the
// ones that fall in code. Decoding is linear and steps one byte over what
// does not decode, which can only find more: callers use the set to say
// where a jump may not overwrite bytes, so more is the safe side.
func Targets(code []byte, addr uint64, add func(uint64)) {
	for off := 0; off < len(code); {
		inst, err := Decode(code[off:])
		if err != nil || off+inst.Len > len(code) {
			off++
			continue
		}
		next := addr + uint64(off+inst.Len)
		for _, a := range inst.Args {
			switch a := a.(type) {
			case x86asm.Rel:
				add(next + uint64(int64(a)))
			case x86asm.Mem:
				if a.Base == x86asm.RIP {
					add(next + uint64(a.Disp))
				}
			}
		}
		off += inst.Len
	}
}
