//go:build linux && amd64

package elfsym

import (
	"golang.org/x/arch/x86/x86asm"
)

// stackguard0 is the offset of g.stackguard0, which every Go stack-split
// prologue compares the stack pointer against.
const stackguard0 = 0x10

// goEntry returns where an entry probe goes in the Go function fn: just
// after its stack-split check (`cmp rsp|r12, [g+0x10]; jbe morestack`).
// When the stack must grow, morestack copies the stack and re-enters the
// function at its first instruction; a probe there would fire twice for one
// call, a probe after the check fires once. Large frames compare r12 (lea
// of rsp minus the frame) and huge ones add a jb before the compare; all
// end in the same cmp+jbe pair. g is r14 in ABIInternal functions, or
// loaded from TLS into rcx first in ABI0 ones. Functions marked nosplit
// have no check: their entry is their first instruction.
func (o *object) goEntry(fn fsym) uint64 {
	const window = 64 // the check is within the first few instructions
	code, err := o.codeAt(fn.addr, min(window, max(fn.size, 1)))
	if err != nil {
		return fn.addr
	}
	pc := 0
	sawCmp := false
	for i := 0; i < 8 && pc < len(code); i++ {
		inst, err := x86asm.Decode(code[pc:], 64)
		if err != nil || inst.Op == 0 {
			return fn.addr
		}
		pc += inst.Len
		switch {
		case inst.Op == x86asm.CMP && comparesStackguard(inst):
			sawCmp = true
		case sawCmp && inst.Op == x86asm.JBE:
			return fn.addr + uint64(pc)
		case sawCmp:
			return fn.addr
		}
	}
	return fn.addr
}

func comparesStackguard(inst x86asm.Inst) bool {
	for _, a := range inst.Args[:2] {
		if m, ok := a.(x86asm.Mem); ok && m.Disp == stackguard0 && m.Index == 0 && m.Segment == 0 {
			return true
		}
	}
	return false
}
