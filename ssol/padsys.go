//go:build linux && amd64

package ssol

import (
	"errors"
	"fmt"

	"github.com/utap/utap/internal/x86"
	"golang.org/x/arch/x86/x86asm"
)

// System call pads (ptrace/padsys.go): the instructions just before a
// `syscall` become a jmp to a pad that runs them, then its own `syscall`
// with every register as the original would have it, then writes the
// record and jumps back after the original `syscall`, which stays in place
// (a branch to it, a restart after a signal, find valid code there).

// ErrNotSyscall: the bytes 0f 05 at the address are not a `syscall`
// instruction found by decoding from the last branch target before it
// (the tail of another instruction, or data).
var ErrNotSyscall = errors.New("not a syscall instruction")

// notSyscallError is ErrNoPad's error, its text unchanged, that is also
// ErrNotSyscall.
type notSyscallError struct{ err error }

func (e notSyscallError) Error() string        { return e.err.Error() }
func (e notSyscallError) Unwrap() error        { return e.err }
func (e notSyscallError) Is(target error) bool { return target == ErrNotSyscall }

// PlanSyscall decides whether the instructions before the `syscall` at sc
// can be displaced by a jmp rel32, and finds the call's number. code holds
// the object's bytes from `from`, an instruction boundary with nothing
// landing in (from, sc) (the caller knows the object's landings), to sc+2
// at least. The displaced instructions are whole, at least JumpLen bytes,
// and end exactly at sc; one of them sets the number (mov $imm,%eax or
// xor %eax,%eax) and none after it writes rax. The error wraps ErrNoPad.
func PlanSyscall(code []byte, from, sc uint64, busy func(addr uint64) bool) (*Displaced, int, error) {
	return planSyscall(code, from, sc, busy, true)
}

// PlanSyscallAny is PlanSyscall for a `syscall` whose number may be set
// elsewhere (a dispatch pad's, which reads it from eax): nr is -1 then.
func PlanSyscallAny(code []byte, from, sc uint64) (*Displaced, int, error) {
	return planSyscall(code, from, sc, nil, false)
}

func planSyscall(code []byte, from, sc uint64, busy func(addr uint64) bool, needNr bool) (*Displaced, int, error) {
	no := noPadAt(sc)
	starts, err := syscallStarts(code, from, sc)
	if err != nil {
		return nil, 0, err
	}
	first := -1
	for i := len(starts) - 1; i >= 0; i-- {
		if sc-starts[i] >= JumpLen {
			first = i
			break
		}
	}
	if first < 0 {
		return nil, 0, no("fewer than %d bytes of instructions before it since the last branch target", JumpLen)
	}
	// Further back while that finds the number (mov $nr,%eax; movq $x,(%rsp);
	// syscall), a few instructions at most.
	for first > 0 && len(starts)-first < 4 {
		if _, ok := staticNrAt(code, from, starts[first:]); ok {
			break
		}
		first--
	}
	d := &Displaced{Addr: starts[first], Len: int(sc - starts[first])}
	for _, a := range starts[first:] {
		in, err := Analyze(code[a-from:sc-from], a)
		if err != nil {
			return nil, 0, fmt.Errorf("%w at %#x: instruction refused (%w)", ErrNoPad, sc, err)
		}
		if in.IsJcc() {
			// glibc's `cmpb $0,single_threaded; je multi; xor %eax,%eax;
			// syscall` (read): the pad runs the jcc as a jcc rel32, to
			// the same target, outside the range.
			if t := in.an.emu.target; t >= d.Addr && t <= sc {
				return nil, 0, no("a conditional branch into the range (%s at %#x)", in.Text, in.Addr)
			}
			d.Branches = true
		} else if why := padRefusal(in, false); why != "" {
			return nil, 0, no("%s (%s at %#x)", why, in.Text, in.Addr)
		}
		d.Insns = append(d.Insns, in)
	}
	for a := d.Addr + 1; a < sc && busy != nil; a++ {
		if busy(a) {
			return nil, 0, no("%#x is busy (a probe, or code elsewhere jumps there)", a)
		}
	}
	nr, ok := staticNr(d.Insns)
	if !ok && needNr {
		return nil, 0, no("the call's number is not set by the instructions before it")
	}
	if !ok {
		nr = -1
	}
	return d, nr, nil
}

// syscallStarts are the instructions' addresses from `from` to the
// `syscall` at sc; an error wrapping ErrNotSyscall when the bytes there
// are not one.
func syscallStarts(code []byte, from, sc uint64) ([]uint64, error) {
	notSyscall := func(format string, a ...any) error {
		return notSyscallError{fmt.Errorf("%w at %#x: "+format, append([]any{ErrNoPad, sc}, a...)...)}
	}
	if sc < from || sc-from+2 > uint64(len(code)) || code[sc-from] != 0x0f || code[sc-from+1] != 0x05 {
		return nil, notSyscall("not a syscall instruction")
	}
	var starts []uint64
	for off := 0; uint64(off) < sc-from; {
		inst, err := x86.Decode(code[off:])
		if err != nil {
			return nil, notSyscall("cannot decode at %#x", from+uint64(off))
		}
		starts = append(starts, from+uint64(off))
		off += inst.Len
		if uint64(off) > sc-from {
			return nil, notSyscall("not an instruction boundary")
		}
	}
	return starts, nil
}

// SyscallAt checks that the `syscall` at sc is one (code as for
// PlanSyscall: from a boundary with nothing landing between) and finds
// its number when the instructions before it set it (known).
func SyscallAt(code []byte, from, sc uint64) (nr int, known bool, err error) {
	starts, err := syscallStarts(code, from, sc)
	if err != nil {
		return 0, false, err
	}
	// A few instructions back at most, as PlanSyscall looks.
	for i := max(0, len(starts)-8); i < len(starts); i++ {
		if nr, ok := staticNrAt(code[:sc-from], from, starts[i:]); ok {
			return nr, true, nil
		}
	}
	return 0, false, nil
}

// staticNrAt is staticNr of the instructions at starts (code from from).
func staticNrAt(code []byte, from uint64, starts []uint64) (int, bool) {
	var ins []*Insn
	for i, a := range starts {
		end := uint64(len(code)) + from
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		ins = append(ins, &Insn{Bytes: code[a-from : end-from]})
	}
	return staticNr(ins)
}

// staticNr finds the number the instructions set in eax: the last
// mov $imm,%eax (or %rax) or xor %eax,%eax, with nothing after it that
// may write rax.
func staticNr(ins []*Insn) (int, bool) {
	nr, set := 0, false
	for _, in := range ins {
		if x86.IsEndbr(in.Bytes) {
			continue
		}
		inst, err := x86.Decode(in.Bytes)
		if err != nil {
			return 0, false
		}
		switch {
		case inst.Op == x86asm.MOV && isRax(inst.Args[0]):
			imm, ok := inst.Args[1].(x86asm.Imm)
			if !ok || int64(imm) < 0 || int64(imm) > 1<<16 {
				return 0, false
			}
			nr, set = int(imm), true
		case inst.Op == x86asm.XOR && isRax(inst.Args[0]) && isRax(inst.Args[1]):
			nr, set = 0, true
		case !keepsRax(inst):
			set = false // it may change the number
		}
	}
	return nr, set
}

func isRax(a x86asm.Arg) bool {
	r, ok := a.(x86asm.Reg)
	return ok && (r == x86asm.RAX || r == x86asm.EAX || r == x86asm.AX || r == x86asm.AL || r == x86asm.AH)
}

// keepsRax: an instruction known to leave rax alone: a few common ones
// whose only written operand is the first, and that is not rax.
func keepsRax(inst x86asm.Inst) bool {
	switch inst.Op {
	case x86asm.TEST, x86asm.CMP, x86asm.NOP, x86asm.PUSH:
		return true
	case x86asm.MOV, x86asm.MOVZX, x86asm.MOVSX, x86asm.MOVSXD, x86asm.LEA, x86asm.ADD, x86asm.SUB,
		x86asm.AND, x86asm.OR, x86asm.XOR, x86asm.SHL, x86asm.SHR, x86asm.SAR, x86asm.NEG, x86asm.NOT,
		x86asm.INC, x86asm.DEC:
		return !isRax(inst.Args[0])
	}
	return false
}

// Relocated returns the displaced instructions relocated to run at `at`,
// with no jump after them (a system call pad goes on with its own
// `syscall`). Only instructions that fall through are displaced there.
func (d *Displaced) Relocated(at uint64) ([]byte, error) {
	out := make([]byte, 0, d.Len+8)
	for _, in := range d.Insns {
		pc := at + uint64(len(out))
		if in.IsJcc() {
			out = appendJcc(out, in, pc)
			continue
		}
		if in.Action == Emulate && in.an.emu.kind != emNop && in.an.emu.kind != emPush {
			return nil, fmt.Errorf("%w at %#x: %s cannot run before the pad's syscall", ErrNoPad, d.Addr, in.Text)
		}
		var err error
		if out, err = d.appendMoved(out, in, pc); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// OrigOf maps rip in the displaced instructions as Relocated(at) laid
// them out to the original address a thread there stands at: an
// instruction's start to the original instruction, their end to the
// `syscall`, the absolute jmp of a far jcc (its condition held) to the
// jcc's target. ok is false for any other rip. The tracer moves a thread
// stopped there back to the original code (pads taken out).
func (d *Displaced) OrigOf(at, rip uint64) (uint64, bool) {
	pc := at
	for _, in := range d.Insns {
		if rip == pc {
			return in.Addr, true
		}
		size := uint64(len(in.Bytes))
		if in.IsJcc() {
			size = 6
			if _, ok := rel32(pc+6, in.an.emu.target); !ok {
				if rip == pc+2 {
					return in.an.emu.target, true
				}
				size = jccFar
			}
		}
		pc += size
	}
	if rip == pc {
		return d.Addr + uint64(d.Len), true
	}
	return 0, false
}
