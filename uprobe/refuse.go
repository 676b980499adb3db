//go:build linux && amd64

package uprobe

import (
	"errors"
	"fmt"

	"github.com/utap/utap/internal/x86"
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
//   - a VEX/EVEX rip-relative instruction: refused like the lock prefix;
//   - syscall (and sysenter): stepped out of line, it leaves the slot's
//     address in rcx, where the program expects the next instruction's,
//     and a probe on that next instruction never fires;
//   - a rep-prefixed string instruction: the probe fires at every
//     iteration (the kernel steps one, and the int3 is hit again).
//
// Other VEX instructions are either stepped correctly (shlx, andn) or
// refused by the kernel with ENOTSUPP, which hint turns into the same
// advice.
func refuse(code []byte) error {
	if len(code) == 0 {
		return fmt.Errorf("%w: no instruction bytes", ErrRefused)
	}
	l, err := x86.Locate(code)
	if l.Lock { // found among the prefixes, whatever follows
		return refused(code, "uprobes refuse lock-prefixed instructions, silently when the code is mapped after attaching")
	}
	if err != nil {
		return fmt.Errorf("%w: % x: %w", ErrRefused, code, err)
	}
	if l.VEX < 0 && l.OpMap == 1 && (l.Opcode(code) == 0x05 || l.Opcode(code) == 0x34) {
		return refused(code, "after the kernel steps a syscall out of line, rcx holds the step slot's address instead of the next instruction's, and a probe on that next instruction never fires")
	}
	if l.VEX < 0 && l.OpMap == 0 && (l.Rep || l.RepNE) && isString(l.Opcode(code)) {
		return refused(code, "the kernel's uprobe fires once per iteration of a rep-prefixed string instruction, not once per instruction")
	}
	if l.VEX >= 0 {
		switch op := l.Opcode(code); {
		case l.RipRel(code):
			return refused(code, "uprobes refuse VEX/EVEX rip-relative instructions, silently when the code is mapped after attaching")
		case looksLikeBranch(op):
			return refused(code, fmt.Sprintf("the kernel emulates VEX opcode %#02x as a branch and skips the instruction", op))
		}
	}
	return nil
}

// isString says whether op is a string instruction a rep prefix repeats:
// ins, outs, movs, cmps, stos, lods, scas.
func isString(op byte) bool {
	return op >= 0x6c && op <= 0x6f || op >= 0xa4 && op <= 0xa7 || op >= 0xaa && op <= 0xaf
}

// looksLikeBranch lists the one-byte opcodes the kernel's uprobe code
// emulates instead of stepping (arch/x86/kernel/uprobes.c, branch_setup_xol_ops).
func looksLikeBranch(op byte) bool {
	return op >= 0x70 && op <= 0x7f || op == 0x90 || op == 0xe8 || op == 0xe9 || op == 0xeb
}

func refused(code []byte, why string) error {
	return fmt.Errorf("%w: %s: %s; use --backend ptrace", ErrRefused, x86.Text(code), why)
}
