//go:build linux && amd64

package ssol

import "github.com/utap/utap/internal/x86"

// refusal returns why the instruction must not be probed, or "".
// Refused: what traps into the kernel or changes privileged state (a copy
// would run fine but the trap would be taken from the slot, with a slot
// rip in the kernel's eyes), far and 16-bit control transfers, and what is
// invalid in 64-bit mode.
func refusal(l *x86.Layout, code []byte) string {
	op := l.Opcode(code)
	var reg = -1
	if l.ModRM >= 0 {
		reg = l.Reg(code)
	}
	if l.VEX >= 0 {
		return "" // no system or control-transfer instruction is VEX/EVEX encoded
	}
	switch l.OpMap {
	case 0:
		switch {
		case op == 0xcc:
			return "int3 (someone else's breakpoint?)"
		case op == 0xcd:
			return "int n traps into the kernel"
		case op == 0xf1:
			return "int1 traps"
		case op == 0xf4:
			return "hlt is privileged"
		case op == 0xfa || op == 0xfb:
			return "cli/sti are privileged"
		case op >= 0xe4 && op <= 0xe7, op >= 0xec && op <= 0xef, op >= 0x6c && op <= 0x6f:
			return "port I/O"
		case op == 0x17 || op == 0x8e:
			return "loads a segment register (pop/mov ss inhibit traps)"
		case op == 0xca || op == 0xcb:
			return "far return"
		case op == 0xcf:
			return "iret"
		case op == 0xff && (reg == 3 || reg == 5):
			return "far call/jmp"
		case (op == 0xc6 || op == 0xc7) && code[l.ModRM] == 0xf8:
			return "transactional memory (xabort/xbegin)"
		case invalid64(op):
			return "invalid in 64-bit mode"
		}
		if l.P66 && (op == 0xe8 || op == 0xe9 || op == 0xeb || op>>4 == 7 || op == 0xc2 ||
			op == 0xc3 || (op >= 0xe0 && op <= 0xe3) || (op == 0xff && (reg == 2 || reg == 4))) {
			return "66-prefixed branch (16-bit operand size)"
		}
	case 1:
		switch {
		case op == 0x01 && userOp01(code[l.ModRM]):
		case op == 0x00 || op == 0x01:
			return "system instruction (0f 00/0f 01 group)"
		case op == 0x02 || op == 0x03:
			return "lar/lsl"
		case op == 0x05 || op == 0x34:
			return "syscall/sysenter traps into the kernel"
		case op == 0x07 || op == 0x35:
			return "sysret/sysexit are privileged"
		case op == 0x06 || op == 0x08 || op == 0x09 || op == 0x30 || op == 0x32 || op == 0x37 || op == 0xaa:
			return "privileged instruction"
		case op >= 0x20 && op <= 0x27:
			return "moves to/from control or debug registers"
		case op == 0x0b || op == 0xb9 || op == 0xff:
			return "undefined instruction (ud0/ud1/ud2)"
		case (op == 0x78 || op == 0x79) && !l.P66 && !l.RepNE:
			return "vmread/vmwrite"
		case op == 0x0f:
			return "3DNow!"
		case op>>4 == 8 && l.P66:
			return "66-prefixed branch (16-bit operand size)"
		}
	}
	return ""
}

// invalid64 lists one-byte opcodes that #UD in 64-bit mode (c4, c5, 62
// are VEX/EVEX and d5 is APX, handled by the locator).
func invalid64(op byte) bool {
	switch op {
	case 0x06, 0x07, 0x0e, 0x16, 0x1e, 0x1f, 0x27, 0x2f, 0x37, 0x3f, 0x60, 0x61, 0x82,
		0x9a, 0xce, 0xd4, 0xd6, 0xea:
		return true
	}
	return false
}

// userOp01 lists the 0f 01 encodings that user code runs and that behave
// the same from a slot: xgetbv, xtest (glibc's AVX epilogues), rdpkru,
// rdtscp.
func userOp01(modrm byte) bool {
	switch modrm {
	case 0xd0, 0xd6, 0xee, 0xf9:
		return true
	}
	return false
}
