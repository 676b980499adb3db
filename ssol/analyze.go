//go:build linux && amd64

package ssol

import (
	"encoding/binary"
	"fmt"

	"github.com/utap/utap/internal/x86"
	"golang.org/x/arch/x86/x86asm"
)

// analysis holds what Analyze learned about an instruction.
type analysis struct {
	emu emulation // Emulate instructions

	// RIP-relative operand (Boost, or Step when the slot is out of range).
	dispOff int   // offset of the disp32, -1 if none
	disp    int32 // its value
	scratch int   // Step: register standing in for rip, -1 if none
	stepped []byte
}

// Analyze decodes the instruction at the start of code, which sits at
// runtime address addr, and classifies it. Refused instructions return an
// error wrapping ErrRefused that names the instruction, its address and the
// reason; an int3 already at addr returns an error wrapping ErrBreakpoint.
//
// An instruction with a RIP-relative operand comes back as Boost; Slot
// turns it into Step when the slot is too far from the operand for a
// rewritten disp32 (see ActionFor).
func Analyze(code []byte, addr uint64) (*Insn, error) {
	code = code[:min(len(code), 15)]
	if len(code) > 0 && code[0] == 0xcc {
		return nil, fmt.Errorf("%w at %#x", ErrBreakpoint, addr)
	}
	inst, decErr := x86.Decode(code)
	if decErr == nil {
		code = code[:inst.Len]
	}
	in := &Insn{
		Addr:  addr,
		Bytes: append([]byte(nil), code...),
		Text:  text(inst, code, addr),
		an:    analysis{dispOff: -1, scratch: -1},
	}
	// Our own rules first: they name the reason better than a decode
	// failure does (x86asm cannot decode vmread, 16-bit branches...).
	l, err := x86.Locate(code)
	if err == nil {
		if why := refusal(&l, code); why != "" {
			return nil, in.refuse(why)
		}
	}
	if decErr != nil {
		return nil, fmt.Errorf("%w at %#x: %w", ErrRefused, addr, decErr)
	}
	if x86.IsEndbr(code) {
		in.Action, in.an.emu.kind = Emulate, emNop
		in.an.emu.next = addr + 4
		return in, nil
	}
	if ok, err := in.emulation(&l, inst); err != nil {
		return nil, err
	} else if ok {
		in.Action = Emulate
		return in, nil
	}
	in.Action = Boost
	if l.RipRel(code) {
		if err := in.ripRelative(&l, inst); err != nil {
			return nil, err
		}
	}
	return in, nil
}

func (in *Insn) refuse(why string) error {
	return fmt.Errorf("%w: %s (% x) at %#x: %s", ErrRefused, in.Text, in.Bytes, in.Addr, why)
}

func text(inst x86asm.Inst, code []byte, addr uint64) string {
	switch {
	case inst.Op == 0:
		return "(bad)"
	case x86.IsEndbr(code):
		if code[3] == 0xfa {
			return "endbr64"
		}
		return "endbr32"
	}
	return x86asm.IntelSyntax(inst, addr, nil)
}

// ripRelative checks our locator against x86asm where x86asm can see the
// operand, and prepares the Step rewrite.
func (in *Insn) ripRelative(l *x86.Layout, inst x86asm.Inst) error {
	code := in.Bytes
	off := l.ModRM + 1
	if l.VEX < 0 && !l.P67 {
		if !hasMemBase(inst, x86asm.RIP) || inst.PCRel != 4 || inst.PCRelOff != off {
			return in.refuse(fmt.Sprintf("x86asm does not see the RIP-relative operand at offset %d", off))
		}
	}
	if imm := len(code) - (off + 4); imm < 0 || imm > 4 || imm == 3 {
		return in.refuse(fmt.Sprintf("%d bytes after the disp32", imm))
	}
	in.an.dispOff = off
	in.an.disp = int32(binary.LittleEndian.Uint32(code[off:]))

	// The Step form addresses [scratch+disp32] instead of [rip+disp32],
	// scratch = Addr+len at run time, as uprobes riprel_analyze. The
	// scratch register must not be an operand: not ModRM.reg, not
	// VEX.vvvv (both compared on their low 3 bits, which only costs a
	// choice), and not rbx for cmpxchg8b/16b, which use it implicitly
	// (their ModRM.reg is 1, so rsi is picked before rbx anyway).
	reg, v := l.Reg(code), l.VVVV(code)
	scr := -1
	for _, r := range []int{rsi, rdi, rbx} {
		if r != reg && r != v {
			scr = r
			break
		}
	}
	s := append([]byte(nil), code...)
	s[l.ModRM] = 0x80 | byte(reg)<<3 | byte(scr) // mod 10: [scr+disp32]
	switch {
	case l.Rex >= 0:
		s[l.Rex] &^= 0x01 // REX.B would pick r14/r15/r11
	case l.VEXLen >= 3:
		s[l.VEX+1] |= 0x60 // inverted VEX/EVEX X and B: 0
	}
	in.an.scratch, in.an.stepped = scr, s
	return nil
}

func hasMemBase(inst x86asm.Inst, base x86asm.Reg) bool {
	for _, a := range inst.Args {
		if m, ok := a.(x86asm.Mem); ok && m.Base == base {
			return true
		}
	}
	return false
}
