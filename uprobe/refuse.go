package uprobe

import (
	"errors"
	"fmt"

	"golang.org/x/arch/x86/x86asm"
)

// ErrRefused says a site's instruction is one the kernel's uprobes are
// known to mishandle; the ptrace engine can probe it.
var ErrRefused = errors.New("the kernel cannot probe this instruction correctly")

// Which instructions the kernel mishandles, as measured on 6.18 by
// TestKernelMishandles:
//   - any lock-prefixed instruction: perf_event_open fails with ENOTSUPP
//     when a process maps the code already, but a probe registered before
//     the code is mapped (a library loaded later, a forked child's exec)
//     is silently never installed;
//   - a VEX/EVEX instruction whose opcode byte looks like a one-byte
//     branch (70–7f jcc, e8 call, e9/eb jmp, 90 nop): the kernel emulates
//     it as that branch and the instruction never executes, e.g. vmovq
//     rcx, xmm2 (c4 e1 f9 7e d1) leaves rcx unchanged;
//   - a VEX/EVEX rip-relative instruction: refused like the lock prefix.
//
// Other VEX instructions are either stepped correctly (shlx, andn) or
// refused by the kernel with ENOTSUPP, which hint turns into the same
// advice.
func refuse(code []byte) error {
	if len(code) == 0 {
		return fmt.Errorf("%w: no instruction bytes", ErrRefused)
	}
	i, lock := 0, false
	for i < len(code) && isLegacyPrefix(code[i]) {
		lock = lock || code[i] == 0xf0
		i++
	}
	if lock {
		return refused(code, "uprobes refuse lock-prefixed instructions, silently when the code is mapped after attaching")
	}
	if i < len(code) && code[i]&0xf0 == 0x40 { // REX
		i++
	}
	if i >= len(code) {
		return fmt.Errorf("%w: truncated instruction % x", ErrRefused, code)
	}
	if v, ok := parseVEX(code[i:]); ok {
		switch {
		case v.ripRel:
			return refused(code, "uprobes refuse VEX/EVEX rip-relative instructions, silently when the code is mapped after attaching")
		case looksLikeBranch(v.op):
			return refused(code, fmt.Sprintf("the kernel emulates VEX opcode %#02x as a branch and skips the instruction", v.op))
		}
	}
	return nil
}

// looksLikeBranch lists the one-byte opcodes the kernel's uprobe code
// emulates instead of stepping (arch/x86/kernel/uprobes.c, branch_setup_xol_ops).
func looksLikeBranch(op byte) bool {
	return op >= 0x70 && op <= 0x7f || op == 0x90 || op == 0xe8 || op == 0xe9 || op == 0xeb
}

func refused(code []byte, why string) error {
	text := fmt.Sprintf("% x", code)
	if inst, err := x86asm.Decode(code, 64); err == nil && inst.Op != 0 {
		text = x86asm.IntelSyntax(inst, 0, nil) + " (" + fmt.Sprintf("% x", code[:inst.Len]) + ")"
	}
	return fmt.Errorf("%w: %s: %s; use --backend ptrace", ErrRefused, text, why)
}

func isLegacyPrefix(b byte) bool {
	switch b {
	case 0xf0, 0xf2, 0xf3, 0x2e, 0x36, 0x3e, 0x26, 0x64, 0x65, 0x66, 0x67:
		return true
	}
	return false
}

// vex is what refuse needs of a VEX (c4, c5) or EVEX (62) encoding.
type vex struct {
	mapSel, pp, op, mod byte
	ripRel              bool
}

// parseVEX reads the prefix, opcode and ModRM of a VEX or EVEX
// instruction (in 64-bit mode c4, c5 and 62 always start one).
func parseVEX(b []byte) (vex, bool) {
	var v vex
	var rest []byte
	switch {
	case b[0] == 0xc5 && len(b) >= 3:
		v.mapSel, v.pp, rest = 1, b[1]&3, b[2:]
	case b[0] == 0xc4 && len(b) >= 4:
		v.mapSel, v.pp, rest = b[1]&0x1f, b[2]&3, b[3:]
	case b[0] == 0x62 && len(b) >= 5:
		v.mapSel, v.pp, rest = b[1]&7, b[2]&3, b[4:]
	default:
		return v, false
	}
	v.op = rest[0]
	if v.mapSel == 1 && v.op == 0x77 || len(rest) < 2 { // vzeroupper/vzeroall: no ModRM
		return v, true
	}
	modrm := rest[1]
	v.mod = modrm >> 6
	v.ripRel = v.mod == 0 && modrm&7 == 5
	return v, true
}
