package uretprobe

import (
	"fmt"

	"github.com/utap/utap/internal/x86"
	"golang.org/x/arch/x86/x86asm"
)

// GoEntry returns where a Go function's entry probe goes: after its
// stack-split check, so that it fires once per call. The check,
//
//	[lea r12, [rsp-N]]  (or, for huge frames, mov/sub/jb)
//	cmp rsp|r12, [r14+0x10]   ; g.stackguard0
//	jbe more
//	...
//	more: call runtime.morestack_noctxt; jmp start
//
// jumps back to the function's start after growing the stack, so a probe
// at start fires twice for that call (and its entry would be recorded on the
// old stack). The check is recognised only when the jbe's target block
// jumps back to start; without one (NOSPLIT functions, assembly) the entry
// is start. code is the function's body, at address start.
func GoEntry(code []byte, start uint64) (uint64, error) {
	for off, i := 0, 0; off < len(code) && i < 8; i++ {
		inst, err := x86.Decode(code[off:])
		if err != nil {
			return 0, fmt.Errorf("%w: decoding the prologue at %#x: %w", ErrRefused, start+uint64(off), err)
		}
		next := off + inst.Len
		if isStackGuardCmp(inst) && next < len(code) {
			jcc, err := x86.Decode(code[next:])
			if err != nil || jcc.Op != x86asm.JBE {
				return start, nil
			}
			after := next + jcc.Len
			target := after + int(jcc.Args[0].(x86asm.Rel))
			if target > 0 && target < len(code) && jumpsBack(code, target) {
				return start + uint64(after), nil
			}
			return start, nil
		}
		if inst.Op == x86asm.CALL || inst.Op == x86asm.RET || inst.Op == x86asm.JMP {
			break
		}
		off = next
	}
	return start, nil
}

// isStackGuardCmp matches cmp REG, [REG+0x10]: g.stackguard0, g being r14
// (register ABI) or a register loaded from TLS (older Go).
func isStackGuardCmp(inst x86asm.Inst) bool {
	if inst.Op != x86asm.CMP {
		return false
	}
	for _, a := range inst.Args[:2] {
		if m, ok := a.(x86asm.Mem); ok && m.Disp == 0x10 && m.Index == 0 && m.Base != 0 && m.Base != x86asm.RIP {
			return true
		}
	}
	return false
}

// jumpsBack reports whether the block at off (the morestack call) ends
// with a jmp to offset 0 within a few instructions.
func jumpsBack(code []byte, off int) bool {
	for i := 0; i < 32 && off < len(code); i++ {
		inst, err := x86.Decode(code[off:])
		if err != nil {
			return false
		}
		off += inst.Len
		if inst.Op == x86asm.JMP {
			rel, ok := inst.Args[0].(x86asm.Rel)
			return ok && off+int(rel) == 0
		}
		if inst.Op == x86asm.RET {
			return false
		}
	}
	return false
}
