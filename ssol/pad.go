//go:build linux && amd64

package ssol

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/utap/utap/internal/x86"
	"golang.org/x/arch/x86/x86asm"
)

// Jump pads: a site gets a 5-byte jmp rel32 to a pad that runs the probe,
// then the instructions the jump overwrote (relocated), then jumps back.
// Nothing traps at run time, so the displaced code must behave exactly as
// it did in place; whatever cannot be shown to do so keeps its int3.

// JumpLen is the size of the jmp rel32 written at a padded site.
const JumpLen = 5

// MaxCodeLen bounds len(Code(at)): under 5 bytes of whole instructions
// before a last one of up to 15, then a 14-byte absolute jump back; a
// conditional branch (two bytes) grows to 16 at most (jccFar), and three
// fit in the range.
const MaxCodeLen = 3*jccFar + 14

// jccFar is the bytes of a jcc relocated beyond ±2 GiB of its target: the
// opposite condition skipping an absolute jmp.
const jccFar = 2 + 14

// ErrNoPad: the site cannot be displaced by a jump; it keeps its int3.
var ErrNoPad = errors.New("no jump pad")

// Displaced is the instructions a 5-byte jump overwrites at a site.
type Displaced struct {
	Addr  uint64  // the site
	Len   int     // bytes overwritten: whole instructions, >= JumpLen
	Insns []*Insn // them, analysed
	// Branches: a conditional branch among them (a system call pad's)
	// may leave the pad before its end.
	Branches bool
	// Hop: where the jump to the pad is, in the padding before the site,
	// which jumps there (jmp rel8); 0 when the jump is at the site
	// (padhop.go). hopFill: the padding between that jump and the site.
	Hop     uint64
	hopFill []byte
}

// IsJcc says whether in is a conditional jump (jcc rel8 or rel32).
func (in *Insn) IsJcc() bool { return in.Action == Emulate && in.an.emu.kind == emJcc }

// PlanPad decides whether the instructions at site can be displaced by a
// jmp rel32. fn is the code of the function holding the site (original
// bytes: the caller has put back any int3), fnAddr its runtime start.
// busy reports whether an address in (site, site+Len) must stay reachable:
// another probe or breakpoint owns it, or the caller knows something
// outside fn may land there (another symbol's entry, an exception landing
// pad, a branch from a .cold part: see elfsym.Landings); such a site keeps
// its int3. The error wraps ErrNoPad and says why, briefly.
//
// Rules (a refusal only costs an int3):
//   - the displaced range is whole instructions within fn, each Analyze'd:
//     Boost instructions (RIP-relative ones relocated by Code) except those
//     that may trap (cpuid, rdtsc, rdtscp, rdpmc, lock on what cannot be
//     locked); nops and endbr (copied); push reg (copied); conditional
//     jumps (Code makes them jcc rel32 to the same target: a function that
//     starts by testing its pointer, `test %rdi,%rdi; je`, as many of
//     libc's do); and as the last one only a direct jmp or call (Code
//     redoes it from the pad), a ret, or an indirect jmp (a PLT stub's,
//     its rip-relative slot relocated). Any other branch (loop, jrcxz) or
//     system instruction is refused. A ret shorter than the jump may be all
//     when nops or int3s follow it to fn's end (a caller that passes a
//     function that only returns up to its alignment boundary: the jump
//     covers the padding);
//   - no direct branch in fn (jmp, jcc, call, loop, jrcxz, xbegin) may land
//     in (site, site+Len): fn is decoded linearly from fnAddr;
//   - inside the function (site != fnAddr) the walk must reach site, must
//     decode all of fn, and fn must have no indirect jmp (a jump table may
//     land anywhere). At the entry, compiled code never jumps into its own
//     prologue through a table, so only direct branches are checked there,
//     and undecodable bytes are stepped over one at a time (which can only
//     find more targets, so refuse more).
func PlanPad(fn []byte, fnAddr, site uint64, busy func(addr uint64) bool) (*Displaced, error) {
	no := noPadAt(site)
	if len(fn) == 0 {
		return nil, no("function size unknown")
	}
	if site < fnAddr || site-fnAddr >= uint64(len(fn)) {
		return nil, no("outside the function at %#x (%d bytes)", fnAddr, len(fn))
	}
	return displace(fn, fnAddr, site, JumpLen, busy, no)
}

// displace takes the instructions at site (fn is the code from fnAddr)
// until they cover n bytes, each able to run from a pad, with nothing
// busy nor any branch of fn landing inside them (PlanPad's rules).
func displace(fn []byte, fnAddr, site uint64, n int, busy func(uint64) bool, no func(string, ...any) error) (*Displaced, error) {
	start := int(site - fnAddr)
	d := &Displaced{Addr: site}
	for d.Len < n {
		off := start + d.Len
		if off >= len(fn) {
			return nil, no("the function ends %d bytes after the site", d.Len)
		}
		in, err := Analyze(fn[off:], site+uint64(d.Len))
		if err != nil {
			return nil, fmt.Errorf("%w at %#x: instruction refused (%w)", ErrNoPad, site, err)
		}
		d.Len += len(in.Bytes)
		if d.Len < n && in.isRet() && padding(fn[start+d.Len:], n-d.Len) {
			// A function that only returns (the loader's _dl_debug_state,
			// one byte) followed by its alignment's nops: the jump covers
			// them too; nothing runs them, nor lands there (busy).
			d.Len = n
		} else if why := padRefusal(in, d.Len >= n); why != "" {
			return nil, no("%s (%s at %#x)", why, in.Text, in.Addr)
		}
		d.Insns = append(d.Insns, in)
	}
	end := site + uint64(d.Len)
	for a := site + 1; a < end && busy != nil; a++ {
		if busy(a) {
			return nil, no("%#x is busy (another probe or breakpoint, or code elsewhere in the object jumps there)", a)
		}
	}
	if why := checkBranches(fn, fnAddr, site, end); why != "" {
		return nil, no("%s", why)
	}
	return d, nil
}

// noPadAt makes the errors that refuse a pad at site: ErrNoPad wrapped,
// the site, why.
func noPadAt(site uint64) func(format string, a ...any) error {
	return func(format string, a ...any) error {
		return fmt.Errorf("%w at %#x: "+format, append([]any{ErrNoPad, site}, a...)...)
	}
}

func (in *Insn) isRet() bool { return in.Action == Emulate && in.an.emu.kind == emRet }

// padding says whether b is alignment padding up to its end, nops or
// int3s, of which the first n bytes are taken: fn's caller ends fn at
// the alignment boundary after the function's symbol.
func padding(b []byte, n int) bool {
	if len(b) < n {
		return false
	}
	for len(b) > 0 {
		k := fill(b)
		if k == 0 {
			return false
		}
		b = b[k:]
	}
	return true
}

// fill is the length of the alignment padding instruction b starts
// with, a nop or an int3, 0 if it starts with none.
func fill(b []byte) int {
	if len(b) > 0 && b[0] == 0xcc {
		return 1
	}
	if inst, err := x86.Decode(b); err == nil && inst.Op == x86asm.NOP {
		return inst.Len
	}
	return 0
}

// padRefusal says why in cannot run from a pad, or "". last: in completes
// the range, so a jump or call may end it.
func padRefusal(in *Insn, last bool) string {
	switch in.Action {
	case Boost:
		return traps(in.Bytes)
	case Emulate:
		switch in.an.emu.kind {
		case emNop, emPush:
			return ""
		case emJmp, emCall:
			if last {
				return ""
			}
			return "jmp/call before the end of the range"
		case emJcc:
			// Relocated by Code; a target inside the range is refused
			// by checkBranches, as any branch landing there.
			return ""
		case emLoop, emJrcxz:
			return "conditional branch in the range"
		case emRet:
			// Last, it leaves as it would have: the return address is
			// on the stack, not in its position (a leaf's lea; ret).
			if last {
				return ""
			}
			return "ret before the end of the range"
		case emJmpInd:
			// Last, it leaves as it would have (Code): a PLT stub's
			// `jmp *GOT(%rip)`, which ltrace's -e probes.
			if last {
				return ""
			}
			return "indirect branch in the range"
		case emCallInd:
			return "indirect branch in the range"
		}
	}
	return "cannot run from a pad"
}

// traps catches Boost instructions that can trap where compiled code
// would not expect it: a handler would see the pad's rip. The kernel can
// make cpuid, rdtsc(p) and rdpmc fault per process (ARCH_SET_CPUID,
// PR_SET_TSC, perf permissions); a lock prefix on what cannot be locked
// raises #UD (Analyze lets those through: a slot raises it too).
func traps(code []byte) string {
	l, err := x86.Locate(code)
	if err != nil || l.VEX >= 0 {
		return ""
	}
	if l.Lock && !lockable(code) {
		return "lock prefix on an instruction that cannot be locked"
	}
	if l.OpMap != 1 {
		return ""
	}
	switch op := l.Opcode(code); {
	case op == 0xa2, op == 0x31, op == 0x33:
		return "cpuid/rdtsc/rdpmc may trap"
	case op == 0x01 && l.ModRM >= 0 && code[l.ModRM] == 0xf9:
		return "rdtscp may trap"
	}
	return ""
}

// lockable: a read-modify-write instruction with a memory destination,
// the only kind a lock prefix is valid on.
func lockable(code []byte) bool {
	inst, err := x86.Decode(code)
	if err != nil || len(inst.Args) == 0 {
		return false
	}
	if _, mem := inst.Args[0].(x86asm.Mem); !mem {
		return false
	}
	switch inst.Op {
	case x86asm.ADD, x86asm.ADC, x86asm.AND, x86asm.BTC, x86asm.BTR, x86asm.BTS, x86asm.CMPXCHG,
		x86asm.CMPXCHG8B, x86asm.CMPXCHG16B, x86asm.DEC, x86asm.INC, x86asm.NEG, x86asm.NOT,
		x86asm.OR, x86asm.SBB, x86asm.SUB, x86asm.XOR, x86asm.XADD, x86asm.XCHG:
		return true
	}
	return false
}

// Code returns the displaced instructions relocated to run at `at` (the
// address they will occupy in the pad) followed by the jump back to
// Addr+Len or, when the last instruction is a jmp/call, its equivalent
// that leaves for the branch target. Jumps use e9 rel32 when in reach,
// else ff 25 00000000 abs64. It errors (wrapping ErrNoPad) when a
// RIP-relative operand is beyond disp32 reach from its new address; the
// caller then keeps the int3.
func (d *Displaced) Code(at uint64) ([]byte, error) {
	out := make([]byte, 0, MaxCodeLen)
	for _, in := range d.Insns {
		pc := at + uint64(len(out))
		if in.Action == Emulate {
			switch e := &in.an.emu; e.kind {
			case emJmp:
				return appendJmp(out, pc, e.target), nil
			case emCall:
				out = appendPush(out, e.next)
				return appendJmp(out, at+uint64(len(out)), e.target), nil
			case emRet:
				return append(out, in.Bytes...), nil
			case emJmpInd:
				return appendJmpInd(out, in, pc)
			case emJcc:
				out = appendJcc(out, in, pc)
				continue
			}
		}
		var err error
		if out, err = d.appendMoved(out, in, pc); err != nil {
			return nil, err
		}
	}
	return appendJmp(out, at+uint64(len(out)), d.Addr+uint64(d.Len)), nil
}

// appendJcc appends the conditional jump in run at pc, to the same
// target: jcc rel32, or beyond ±2 GiB the opposite condition skipping an
// absolute jmp (jccFar bytes).
func appendJcc(out []byte, in *Insn, pc uint64) []byte {
	e := &in.an.emu
	if rel, ok := rel32(pc+6, e.target); ok {
		return binary.LittleEndian.AppendUint32(append(out, 0x0f, 0x80|e.cc), uint32(rel))
	}
	out = append(out, 0x70|(e.cc^1), jccFar-2)
	return appendJmp(out, pc+2, e.target)
}

// appendJmpInd appends the indirect jmp in (the range's last) run at pc:
// through a register or a register-based operand as it is, through
// [rip+disp32] (its last four bytes: jmp has no immediate) with the
// displacement made to read the same slot from there.
func appendJmpInd(out []byte, in *Insn, pc uint64) ([]byte, error) {
	n := len(out)
	out = append(out, in.Bytes...)
	inst, err := x86.Decode(in.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%w at %#x: %w", ErrNoPad, in.Addr, err)
	}
	m, ok := inst.Args[0].(x86asm.Mem)
	if !ok || m.Base != x86asm.RIP {
		return out, nil
	}
	size := uint64(len(in.Bytes))
	old := int32(binary.LittleEndian.Uint32(in.Bytes[size-4:]))
	slot := in.Addr + size + uint64(int64(old))
	disp, ok := rel32(pc+size, slot)
	if !ok {
		return nil, fmt.Errorf("%w at %#x: the operand of %s is beyond ±2 GiB of %#x", ErrNoPad, in.Addr, in.Text, pc)
	}
	binary.LittleEndian.PutUint32(out[n+int(size)-4:], uint32(disp))
	return out, nil
}

// appendMoved appends in's bytes run at pc, a rip-relative operand's
// displacement made to reach the same address from there.
func (d *Displaced) appendMoved(out []byte, in *Insn, pc uint64) ([]byte, error) {
	n := len(out)
	out = append(out, in.Bytes...)
	if in.Action == Boost && in.an.dispOff >= 0 {
		disp, ok := in.relocatedDisp(pc)
		if !ok {
			return nil, fmt.Errorf("%w at %#x: the operand of %s is beyond ±2 GiB of %#x", ErrNoPad, d.Addr, in.Text, pc)
		}
		binary.LittleEndian.PutUint32(out[n+in.an.dispOff:], uint32(disp))
	}
	return out, nil
}

// Jump is the 5-byte jmp rel32 written at the site to reach pad, or a
// hop's bytes from its jump on (Span says where they go).
func (d *Displaced) Jump(pad uint64) ([]byte, error) {
	if d.Hop != 0 {
		return d.hopJump(pad)
	}
	rel, ok := rel32(d.Addr+JumpLen, pad)
	if !ok {
		return nil, fmt.Errorf("%w at %#x: the pad at %#x is beyond ±2 GiB", ErrNoPad, d.Addr, pad)
	}
	return binary.LittleEndian.AppendUint32([]byte{0xe9}, uint32(rel)), nil
}

// appendJmp appends a jump at pc to target.
func appendJmp(b []byte, pc, target uint64) []byte {
	if rel, ok := rel32(pc+5, target); ok {
		return binary.LittleEndian.AppendUint32(append(b, 0xe9), uint32(rel))
	}
	b = append(b, 0xff, 0x25, 0, 0, 0, 0) // jmp [rip+0]: the address follows
	return binary.LittleEndian.AppendUint64(b, target)
}

// appendPush pushes v as a call would, without touching flags or other
// registers: push imm32 (sign-extended), then the high half when the
// sign extension got it wrong.
func appendPush(b []byte, v uint64) []byte {
	b = binary.LittleEndian.AppendUint32(append(b, 0x68), uint32(v))
	if uint64(int64(int32(uint32(v)))) != v {
		b = append(b, 0xc7, 0x44, 0x24, 0x04) // movl $hi, 4(%rsp)
		b = binary.LittleEndian.AppendUint32(b, uint32(v>>32))
	}
	return b
}

func rel32(next, target uint64) (int32, bool) {
	r := int64(target - next)
	return int32(r), r >= math.MinInt32 && r <= math.MaxInt32
}

// FallsThrough says whether the pad's copy of the displaced instructions
// ends by jumping back to Addr+Len: none of them is a jmp, call or ret.
func (d *Displaced) FallsThrough() bool {
	for _, in := range d.Insns {
		if in.Action == Emulate && in.an.emu.kind != emNop && in.an.emu.kind != emPush {
			return false
		}
	}
	return true
}
