//go:build linux && amd64

package ssol

import (
	"encoding/binary"
	"fmt"

	"github.com/utap/utap/internal/x86"
	"golang.org/x/arch/x86/x86asm"
	"golang.org/x/sys/unix"
)

type emKind uint8

const (
	emNop     emKind = iota + 1 // rip = next
	emJmp                       // rip = target
	emJcc                       // rip = cc ? target : next
	emCall                      // push next; rip = target
	emRet                       // rip = pop; rsp += imm
	emPush                      // push reg; rip = next
	emCallInd                   // push next; rip = reg or [mem]
	emJmpInd                    // rip = reg or [mem]
	emLoop                      // rcx--; rip = rcx != 0 && cc ? target : next
	emJrcxz                     // rip = rcx == 0 ? target : next
)

// emulation is what Emulate needs, precomputed by Analyze.
type emulation struct {
	kind   emKind
	next   uint64 // Addr+len
	target uint64 // relative branches
	cc     uint8  // jcc condition; loop: 0 loopne, 1 loope, 2 loop
	imm    uint64 // ret imm16
	reg    int    // push, indirect branch via a register; -1 for memory
	addr32 bool   // 67 prefix: loop/jrcxz count with ecx
	mem    memOperand
}

// memOperand is a ModRM/SIB memory operand evaluated from the registers.
type memOperand struct {
	base, index int // register numbers, noReg, or ripBase
	scale       uint8
	disp        int64
	seg         byte // 0x64 fs, 0x65 gs; the others have base 0
	addr32      bool
}

const (
	noReg   = -1
	ripBase = 16
)

// emulation fills in.an.emu when the instruction is in the Emulate class.
func (in *Insn) emulation(l *x86.Layout, inst x86asm.Inst) (bool, error) {
	code := in.Bytes
	e := &in.an.emu
	e.next = in.Addr + uint64(len(code))
	e.reg = noReg
	op := l.Opcode(code)
	switch {
	case inst.Op == x86asm.NOP:
		e.kind = emNop
	case l.OpMap == 0 && (op == 0xeb || op == 0xe9):
		e.kind = emJmp
	case l.OpMap == 0 && op>>4 == 7, l.OpMap == 1 && op>>4 == 8:
		e.kind, e.cc = emJcc, op&0xf
	case l.OpMap == 0 && op == 0xe8:
		e.kind = emCall
	case l.OpMap == 0 && op == 0xc3:
		e.kind = emRet
	case l.OpMap == 0 && op == 0xc2:
		e.kind, e.imm = emRet, uint64(binary.LittleEndian.Uint16(code[l.Op+1:]))
	case l.OpMap == 0 && op>>3 == 0x50>>3 && !l.P66:
		e.kind, e.reg = emPush, int(op&7)|l.RexBit(code, 1)<<3
	case l.OpMap == 0 && op >= 0xe0 && op <= 0xe2:
		e.kind, e.cc, e.addr32 = emLoop, op&3, l.P67
	case l.OpMap == 0 && op == 0xe3:
		e.kind, e.addr32 = emJrcxz, l.P67
	case l.OpMap == 0 && op == 0xff && (l.Reg(code) == 2 || l.Reg(code) == 4):
		e.kind = emJmpInd
		if l.Reg(code) == 2 {
			e.kind = emCallInd
		}
		e.mem, e.reg = in.memOperand(l)
	default:
		return false, nil
	}
	if l.Lock {
		return false, in.refuse("lock prefix: the instruction raises #UD")
	}
	switch e.kind {
	case emJmp, emJcc, emCall, emLoop, emJrcxz:
		if inst.PCRel != 1 && inst.PCRel != 4 || inst.PCRelOff+inst.PCRel != len(code) {
			return false, in.refuse("cannot locate the branch displacement")
		}
		var rel int64
		if inst.PCRel == 1 {
			rel = int64(int8(code[inst.PCRelOff]))
		} else {
			rel = int64(int32(binary.LittleEndian.Uint32(code[inst.PCRelOff:])))
		}
		e.target = e.next + uint64(rel)
	}
	return true, nil
}

// memOperand decodes the ModRM r/m operand: a memory operand, or with mod
// 11 a register number.
func (in *Insn) memOperand(l *x86.Layout) (memOperand, int) {
	code := in.Bytes
	m := code[l.ModRM]
	mod, rm := m>>6, int(m&7)
	b, x := l.RexBit(code, 1)<<3, l.RexBit(code, 2)<<3
	if mod == 3 {
		return memOperand{}, rm | b
	}
	o := memOperand{base: rm | b, index: noReg, seg: l.Seg, addr32: l.P67}
	if o.seg != 0x64 && o.seg != 0x65 {
		o.seg = 0
	}
	p := l.ModRM + 1
	switch {
	case rm == 4:
		sib := code[p]
		p++
		o.scale = sib >> 6
		if idx := int(sib>>3&7) | x; idx != rsp {
			o.index = idx
		}
		o.base = int(sib&7) | b
		if sib&7 == 5 && mod == 0 {
			o.base = noReg
			mod = 2 // disp32 follows
		}
	case rm == 5 && mod == 0:
		o.base = ripBase
		mod = 2
	}
	switch mod {
	case 1:
		o.disp = int64(int8(code[p]))
	case 2:
		o.disp = int64(int32(binary.LittleEndian.Uint32(code[p:])))
	}
	return o, noReg
}

// address evaluates the operand; next is the address of the next
// instruction, the base of RIP-relative operands.
func (o *memOperand) address(regs *unix.PtraceRegs, next uint64) uint64 {
	var a uint64
	switch o.base {
	case noReg:
	case ripBase:
		a = next
	default:
		a = *gpr(regs, o.base)
	}
	if o.index != noReg {
		a += *gpr(regs, o.index) << o.scale
	}
	a += uint64(o.disp)
	if o.addr32 {
		a &= 0xffffffff
	}
	switch o.seg {
	case 0x64:
		a += regs.Fs_base
	case 0x65:
		a += regs.Gs_base
	}
	return a
}

// Emulate applies an Emulate instruction's effect to regs (rip included),
// reading and writing the stack through mem. When a memory access fails,
// regs are left as they were and the error, a *FaultError, says which
// access: the engine makes it in the tracee (FaultError.Touch).
func (in *Insn) Emulate(regs *unix.PtraceRegs, mem Memory) error {
	e := &in.an.emu
	switch e.kind {
	case emNop:
		regs.Rip = e.next
	case emJmp:
		regs.Rip = e.target
	case emJcc:
		regs.Rip = e.next
		if condition(e.cc, regs.Eflags) {
			regs.Rip = e.target
		}
	case emCall:
		if err := push(regs, mem, e.next); err != nil {
			return in.memError(err)
		}
		regs.Rip = e.target
	case emRet:
		var b [8]byte
		if err := mem.ReadAt(b[:], regs.Rsp); err != nil {
			return in.memError(&FaultError{Addr: regs.Rsp, Access: AccessPop, Err: fmt.Errorf("reading the return address at %#x: %w", regs.Rsp, err)})
		}
		regs.Rip = binary.LittleEndian.Uint64(b[:])
		regs.Rsp += 8 + e.imm
	case emPush:
		if err := push(regs, mem, *gpr(regs, e.reg)); err != nil {
			return in.memError(err)
		}
		regs.Rip = e.next
	case emCallInd, emJmpInd:
		var target uint64
		if e.reg != noReg {
			target = *gpr(regs, e.reg)
		} else {
			a := e.mem.address(regs, e.next)
			var b [8]byte
			if err := mem.ReadAt(b[:], a); err != nil {
				return in.memError(&FaultError{Addr: a, Access: AccessLoad, Err: fmt.Errorf("reading the branch target at %#x: %w", a, err)})
			}
			target = binary.LittleEndian.Uint64(b[:])
		}
		if e.kind == emCallInd {
			if err := push(regs, mem, e.next); err != nil {
				return in.memError(err)
			}
		}
		regs.Rip = target
	case emLoop:
		// The count is decremented first, then tested (as KVM em_loop); a
		// 32-bit count writes ecx, which zero-extends into rcx.
		c := regs.Rcx - 1
		if e.addr32 {
			c &= 0xffffffff
		}
		regs.Rcx = c
		zf := regs.Eflags&flagZF != 0
		regs.Rip = e.next
		if c != 0 && (e.cc == 2 || zf == (e.cc == 1)) {
			regs.Rip = e.target
		}
	case emJrcxz:
		c := regs.Rcx
		if e.addr32 {
			c &= 0xffffffff
		}
		regs.Rip = e.next
		if c == 0 {
			regs.Rip = e.target
		}
	default:
		return fmt.Errorf("ssol: %s at %#x is not emulated (action %d)", in.Text, in.Addr, in.Action)
	}
	return nil
}

// push writes v below rsp, then moves rsp: a failed write changes nothing.
func push(regs *unix.PtraceRegs, mem Memory, v uint64) error {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	sp := regs.Rsp - 8
	if err := mem.WriteAt(b[:], sp); err != nil {
		return &FaultError{Addr: sp, Access: AccessPush, Err: fmt.Errorf("pushing to %#x: %w", sp, err)}
	}
	regs.Rsp = sp
	return nil
}

// FaultError: the emulated instruction's memory access at Addr failed,
// through the tracer's reach of the tracee's memory. The instruction
// itself may have faulted there, or not (a stack the kernel grows for the
// process's own access): the engine asks the CPU by Touch.
type FaultError struct {
	Addr   uint64
	Access Access
	Err    error
}

func (e *FaultError) Error() string { return e.Err.Error() }
func (e *FaultError) Unwrap() error { return e.Err }

func (in *Insn) memError(err error) error {
	return fmt.Errorf("emulating %s at %#x: %w", in.Text, in.Addr, err)
}
