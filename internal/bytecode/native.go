package bytecode

import (
	"errors"
	"fmt"

	"github.com/utap/utap/internal/x86"
	"github.com/utap/utap/probe"
)

// NativeVRegBase is the frame slot (8 bytes each) of virtual register 0.
// Slots 0–15 hold the hardware registers at the probe, 16 rflags.
const NativeVRegBase = NativeEntrySlot + probe.MaxEntryArgs

// NativeEntrySlot is the frame slot of argument 1 as it was at the call's
// entry (a return pad copies the arguments its programs read there from
// the thread's shadow stack), argument n at NativeEntrySlot+n-1.
const NativeEntrySlot = 24

// ErrNotNative is returned by Native for a program that has a string
// result, compares two read strings, reads the pid or tid, or a stack
// argument: the pad falls back to a breakpoint and the interpreter.
var ErrNotNative = errors.New("bytecode: program not compilable to native code")

// nativeArgs are the frame slots of the register arguments of each ABI
// (as ptrace's loadArgs); later arguments are on the stack.
var nativeArgs = map[probe.ABI][]uint8{
	probe.ABISysV:   {7, 6, 2, 1, 8, 9},
	probe.ABIGoRegs: {0, 3, 1, 7, 6, 8, 9, 10, 11},
}

// ArgSlot is the frame slot (the hardware register) of argument n of
// abi, ok false when the argument is not in a register.
func ArgSlot(abi probe.ABI, n int) (slot uint8, ok bool) {
	args := nativeArgs[abi]
	if n < 1 || n > len(args) {
		return 0, false
	}
	return args[n-1], true
}

// regSlots maps regNames to frame slots; rip (-1) is a constant.
var regSlots = [len(regNames)]int8{0, 3, 1, 2, 6, 7, 5, 4, 8, 9, 10, 11, 12, 13, 14, 15, -1}

// Regs is the number of virtual registers p uses: the frame needs
// NativeVRegBase+Regs() slots.
func (p *Program) Regs() int { return p.regs }

// Value is the probe.Value Fetch gives for the integer result raw.
func (p *Program) Value(raw uint64) probe.Value {
	return probe.Value{Int: raw, Signed: p.typ.Signed, Format: p.format}
}

// SetValue makes *v Value(raw) field by field: a Value built whole and
// copied was written in narrow stores and read back in wide loads that
// waited for them, a stall per value where millions a second are made.
func (p *Program) SetValue(v *probe.Value, raw uint64) {
	v.Int, v.Str, v.IsStr, v.Err, v.Null, v.Name = raw, "", false, false, false, ""
	v.Format, v.Signed = p.format, p.typ.Signed
}

// Unreadable is the probe.Value Fetch gives when a read faults: what a
// record's fetch whose native read failed shows.
func (p *Program) Unreadable() probe.Value { return probe.Value{Err: true, Format: p.format} }

// CheckNative says whether Native can compile p for abi, without
// compiling it; the error wraps ErrNotNative.
func (p *Program) CheckNative(abi probe.ABI) error {
	if p.isLit || p.typ.Str {
		return fmt.Errorf("%w: string result", ErrNotNative)
	}
	args, ok := nativeArgs[abi]
	if !ok {
		return fmt.Errorf("%w: ABI %d", ErrNotNative, abi)
	}
	for _, in := range p.code {
		switch op := in.op; {
		case op == opArg && (in.imm < 1 || in.imm > uint64(len(args))):
			return fmt.Errorf("%w: argument %d is not in a register", ErrNotNative, in.imm)
		case op == opReg && in.imm >= uint64(len(regNames)):
			return fmt.Errorf("%w: register %d", ErrNotNative, in.imm)
		case op >= opLoad8 && op <= opBuf:
			if why := p.checkMem(in); why != "" {
				return fmt.Errorf("%w: %s", ErrNotNative, why)
			}
		case op == opEntry && (in.imm < 1 || in.imm > probe.MaxEntryArgs):
			return fmt.Errorf("%w: entry argument %d", ErrNotNative, in.imm)
		case op == opPID || op == opTID || op >= numOps:
			return fmt.Errorf("%w: %s", ErrNotNative, op)
		}
	}
	return nil
}

// Native appends to a code computing p's integer value into RAX (nonzero
// for a true condition). On entry RBX points to the frame: hardware
// register i at [rbx+8*i] as at the probe (4 is the probe's rsp), rflags
// at [rbx+128], virtual register i at [rbx+8*(NativeVRegBase+i)], the
// reads' scratch after them (FrameWords), the pid cache at NativePidSlot.
// The code clobbers RAX RCX RDX RSI RDI R8–R11 and the flags only, uses no
// stack and never faults: a program that Reads memory leaves RDX 1 (and
// RAX 0) when a read failed, where the interpreter ends with ErrFault,
// else RDX 0. rip is the probed instruction's address.
func (p *Program) Native(a *x86.Asm, abi probe.ABI, rip uint64) error {
	if err := p.CheckNative(abi); err != nil {
		return err
	}
	n := &native{a: a, args: nativeArgs[abi], rip: rip, labels: make([]x86.Label, len(p.code)+1), p: p, regs: p.regs}
	if p.Reads() {
		n.fault = a.NewLabel()
	}
	for i := range n.labels {
		n.labels[i] = a.NewLabel()
	}
	for pc, l := range n.labels {
		a.Bind(l)
		if pc < len(p.code) {
			n.insn(p.code[pc])
		}
	}
	a.Load(x86.RAX, vreg(0))
	if p.Reads() {
		done := a.NewLabel()
		a.MovRI(x86.RDX, 0)
		a.Jmp(done)
		a.Bind(n.fault)
		a.MovRI(x86.RAX, 0)
		a.MovRI(x86.RDX, 1)
		a.Bind(done)
	}
	return nil
}

type native struct {
	a      *x86.Asm
	args   []uint8
	rip    uint64
	labels []x86.Label // per pc; the last is the end
	p      *Program
	regs   int       // virtual registers: the reads' scratch follows
	fault  x86.Label // a failed read
}

func vreg(r uint8) x86.Mem { return x86.Mem{Base: x86.RBX, Disp: 8 * (NativeVRegBase + int32(r))} }
func slot(i uint8) x86.Mem { return x86.Mem{Base: x86.RBX, Disp: 8 * int32(i)} }

func simm32(v uint64) (int32, bool) { return int32(v), int64(v) == int64(int32(v)) }

// Condition codes of the comparisons, register and immediate forms.
var cmpCC = map[opcode]x86.CC{
	opEq: x86.E, opNe: x86.NE, opULt: x86.B, opULe: x86.BE, opSLt: x86.L, opSLe: x86.LE,
	opEqI: x86.E, opNeI: x86.NE, opULtI: x86.B, opULeI: x86.BE, opUGtI: x86.A, opUGeI: x86.AE,
	opSLtI: x86.L, opSLeI: x86.LE, opSGtI: x86.G, opSGeI: x86.GE,
}

// insn emits one instruction: operands in RAX (a) and RCX (b or imm),
// the result from RAX to dst's slot.
func (n *native) insn(in insn) {
	a := n.a
	switch op := in.op; {
	case op == opNop:
		return
	case op == opJmp:
		a.Jmp(n.target(in.imm))
		return
	case op == opJz || op == opJnz:
		a.Load(x86.RAX, vreg(in.a))
		a.RR(x86.TEST, x86.RAX, x86.RAX)
		cc := x86.E
		if op == opJnz {
			cc = x86.NE
		}
		a.Jcc(cc, n.target(in.imm))
		return
	case op == opConst:
		if v, ok := simm32(in.imm); ok {
			a.StoreI32(vreg(in.dst), v)
			return
		}
		a.MovRI(x86.RAX, in.imm)
	case op == opArg:
		a.Load(x86.RAX, slot(n.args[in.imm-1]))
	case op == opRet:
		a.Load(x86.RAX, slot(0))
	case op == opEntry:
		a.Load(x86.RAX, slot(uint8(NativeEntrySlot+in.imm-1)))
	case op == opReg:
		if s := regSlots[in.imm]; s >= 0 {
			a.Load(x86.RAX, slot(uint8(s)))
		} else {
			a.MovRI(x86.RAX, n.rip)
		}
	case op >= opLoad8 && op <= opLoad64:
		n.load(in)
	case op == opStrEq:
		n.strEq(in, n.p.lits[in.imm])
	case op >= opMov && op <= opZext32:
		a.Load(x86.RAX, vreg(in.a))
		n.unary(op)
	case op >= opAdd && op <= opSLe:
		a.Load(x86.RAX, vreg(in.a))
		a.Load(x86.RCX, vreg(in.b))
		n.binary(op)
	default: // register–immediate
		a.Load(x86.RAX, vreg(in.a))
		n.binaryI(op, in.imm)
	}
	a.Store(vreg(in.dst), x86.RAX)
}

// target is the label of jump target pc; past the end ends the program.
func (n *native) target(pc uint64) x86.Label {
	return n.labels[min(pc, uint64(len(n.labels)-1))]
}

func (n *native) unary(op opcode) {
	a, r := n.a, x86.RAX
	switch op {
	case opNeg:
		a.Neg(r)
	case opNot:
		a.RR(x86.TEST, r, r)
		a.SetccZx(x86.E, r)
	case opCompl:
		a.Not(r)
	case opSext8, opSext16, opSext32, opZext8, opZext16, opZext32:
		a.Extend(extOf[op], r, r)
	}
}

// extOf is the extension of each extend operation.
var extOf = map[opcode]x86.Ext{
	opSext8: x86.SX8, opSext16: x86.SX16, opSext32: x86.SX32,
	opZext8: x86.ZX8, opZext16: x86.ZX16, opZext32: x86.ZX32,
}

// aluOf is the x86 operation of each binary operation that is one
// instruction, in register form (a shift's count in RCX) or immediate form.
// The immediate shifts are not: eval does not mask their count (binaryI).
var aluOf = map[opcode]x86.Op{
	opAdd: x86.ADD, opSub: x86.SUB, opMul: x86.IMUL, opAnd: x86.AND, opOr: x86.OR, opXor: x86.XOR,
	opShl: x86.SHL, opShr: x86.SHR, opSar: x86.SAR,
	opAddI: x86.ADD, opMulI: x86.IMUL, opAndI: x86.AND, opOrI: x86.OR, opXorI: x86.XOR,
}

// binary computes RAX = RAX op RCX.
func (n *native) binary(op opcode) {
	a, x, y := n.a, x86.RAX, x86.RCX
	if cc, ok := cmpCC[op]; ok {
		a.RR(x86.CMP, x, y)
		a.SetccZx(cc, x)
		return
	}
	switch op {
	case opUDiv, opSDiv, opUMod, opSMod:
		n.div(op)
	default: // a shift's count is y, RCX: the CPU masks it to 0..63, as eval does
		if alu, ok := aluOf[op]; ok {
			a.RR(alu, x, y)
		}
	}
}

// div is RAX = RAX op RCX with eval's results where the CPU would fault:
// x/0 = x%0 = 0; for y = -1 (idiv of MIN raises #DE) x/-1 = -x, x%-1 = 0.
func (n *native) div(op opcode) {
	a, x, y := n.a, x86.RAX, x86.RCX
	zero, done := a.NewLabel(), a.NewLabel()
	a.RR(x86.TEST, y, y)
	a.Jcc(x86.E, zero)
	if op == opSDiv || op == opSMod {
		idiv := a.NewLabel()
		a.RI(x86.CMP, y, -1)
		a.Jcc(x86.NE, idiv)
		if op == opSMod {
			a.Jmp(zero)
		} else {
			a.Neg(x)
			a.Jmp(done)
		}
		a.Bind(idiv)
		a.Cqo()
		a.Idiv(y)
	} else {
		a.MovRI(x86.RDX, 0)
		a.Div(y)
	}
	if op == opUMod || op == opSMod {
		a.MovRR(x, x86.RDX)
	}
	a.Jmp(done)
	a.Bind(zero)
	a.MovRI(x, 0)
	a.Bind(done)
}

// binaryI computes RAX = RAX op imm, with an immediate operand where one fits.
func (n *native) binaryI(op opcode, imm uint64) {
	a, x := n.a, x86.RAX
	v, fits := simm32(imm)
	switch op {
	case opShlI, opShrI, opSarI:
		// eval shifts by imm unmasked (the compiler masks it): 64 or more
		// leaves 0, or the sign for sar.
		switch {
		case imm < 64 && op == opShlI:
			a.RI(x86.SHL, x, int32(imm))
		case imm < 64 && op == opShrI:
			a.RI(x86.SHR, x, int32(imm))
		case op == opSarI:
			a.RI(x86.SAR, x, int32(min(imm, 63)))
		default:
			a.MovRI(x, 0)
		}
		return
	case opRSubI: // imm - a = -a + imm
		a.Neg(x)
		op = opAddI
	}
	if cc, ok := cmpCC[op]; ok {
		if fits {
			a.RI(x86.CMP, x, v)
		} else {
			a.MovRI(x86.RCX, imm)
			a.RR(x86.CMP, x, x86.RCX)
		}
		a.SetccZx(cc, x)
		return
	}
	if alu, ok := aluOf[op]; ok && fits {
		a.RI(alu, x, v)
		return
	}
	a.MovRI(x86.RCX, imm)
	n.binary(op - (opAddI - opAdd)) // the register form: same order up to opXorI
}
