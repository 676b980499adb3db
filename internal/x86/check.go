package x86

import (
	"fmt"

	"golang.org/x/arch/x86/x86asm"
)

// StackCheckEnd finds a stack-limit check among code's first 8
// instructions: a cmp with a memory operand at displacement disp (no
// index, no segment; Go's prologue compares rsp or r12 with
// g.stackguard0) followed directly by a jbe. It returns the offset just
// after the jbe, or false when code does not start so: an instruction
// other than jbe after the cmp, one that does not decode, or no such cmp.
func StackCheckEnd(code []byte, disp int64) (int, bool) {
	sawCmp := false
	for i, pc := 0, 0; i < 8 && pc < len(code); i++ {
		inst, err := Decode(code[pc:])
		if err != nil {
			return 0, false
		}
		pc += inst.Len
		switch {
		case inst.Op == x86asm.CMP && comparesAt(inst, disp):
			sawCmp = true
		case sawCmp && inst.Op == x86asm.JBE:
			return pc, true
		case sawCmp:
			return 0, false
		}
	}
	return 0, false
}

func comparesAt(inst x86asm.Inst, disp int64) bool {
	for _, a := range inst.Args[:2] {
		if m, ok := a.(x86asm.Mem); ok && m.Disp == disp && m.Index == 0 && m.Segment == 0 {
			return true
		}
	}
	return false
}

// Text names the instruction at code's start for a message: Intel syntax
// and its bytes, as "mov rax, qword ptr [rip+0x10] (48 8b 05 10 00 00
// 00)", or code's bytes alone when they do not decode.
func Text(code []byte) string {
	inst, err := Decode(code)
	if err != nil || inst.Len > len(code) {
		return fmt.Sprintf("% x", code)
	}
	name := x86asm.IntelSyntax(inst, 0, nil)
	if IsEndbr(code) { // Decode's stand-in is a nop
		name = map[byte]string{0xfa: "endbr64", 0xfb: "endbr32"}[code[3]]
	}
	return fmt.Sprintf("%s (% x)", name, code[:inst.Len])
}
