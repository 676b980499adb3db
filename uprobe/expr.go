//go:build linux && amd64

package uprobe

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf/asm"
	"github.com/utap/utap/probe"
)

// Errors of the code generator, wrapped with the expression they concern.
var (
	ErrTooDeep     = errors.New("expression too deep for the BPF stack")
	ErrUnsupported = errors.New("not supported by the uprobe engine")
)

// MaxDepth bounds the intermediate values an expression keeps on the BPF
// stack while it computes another operand. Operands are ordered to need
// the fewest (Sethi-Ullman), so an expression needs k only if it has at
// least 2^k leaves: any expression the parser accepts (nesting depth 64)
// and the verifier can load fits.
const MaxDepth = 12

// Frame layout of a probe program, as offsets from R10 (512 bytes at most).
const (
	slotFault   = -8  // nonzero once a memory read faulted
	slotTmp     = -16 // target of scalar reads, map keys
	slotAddr    = -24 // an address kept across helper calls
	slotDur     = -32 // return probes: the call's duration
	slotKey     = -56 // return probes: the entry-time map key (keySize bytes)
	slotStack   = -64 // expression-stack slot d is at slotStack-8*d
	strBufSize  = probe.MaxStrLen + 8
	slotStrBuf  = slotStack - 8*(MaxDepth-1) - strBufSize // string comparisons
	chunkLen    = 32                                      // str() == str(): the second is read this many bytes at a time
	slotChunk   = slotStrBuf - (chunkLen + 8)
	frameBottom = slotChunk
)

const _ = uint(512 + frameBottom) // the frame fits in BPF's 512 bytes

// exprGen emits BPF for expressions. R6 holds the pt_regs pointer for the
// whole program; a value is computed into R0 and R1–R5 are scratch, since
// helpers clobber them. Intermediate values live in the stack slots.
type exprGen struct {
	insns   asm.Instructions
	pending string // label of the next emitted instruction
	labels  int
	depth   int
	abi     probe.ABI
	kind    probe.Kind
	v4      bool  // signed division in the ISA (6.6+)
	rd      reads // how tracee memory is read
}

func (g *exprGen) emit(ins ...asm.Instruction) {
	for _, in := range ins {
		if g.pending != "" {
			in = in.WithSymbol(g.pending)
			g.pending = ""
		}
		g.insns = append(g.insns, in)
	}
}

func (g *exprGen) label() string {
	g.labels++
	return fmt.Sprintf("L%d", g.labels)
}

// mark places label l on the next emitted instruction. An instruction
// carries one symbol, so a second label in a row gets a no-op of its own.
func (g *exprGen) mark(l string) {
	if g.pending != "" {
		g.emit(asm.Instruction{OpCode: asm.OpCode(asm.JumpClass).SetJumpOp(asm.Ja)})
	}
	g.pending = l
}

func (g *exprGen) setFault() { g.emit(storeImm64(asm.RFP, slotFault, 1)) }

// norm truncates R0 to t and extends it back to 64 bits, so every value in
// a register is its type's canonical 64-bit form.
func (g *exprGen) norm(t probe.Type) {
	if t.Str || t.Size == 0 || t.Size >= 8 {
		return
	}
	sh := int32(64 - 8*int(t.Size))
	g.emit(asm.LSh.Imm(asm.R0, sh))
	if t.Signed {
		g.emit(asm.ArSh.Imm(asm.R0, sh))
	} else {
		g.emit(asm.RSh.Imm(asm.R0, sh))
	}
}

// expr computes e into R0; a faulting read sets the fault slot.
func (g *exprGen) expr(e probe.Expr) error {
	switch e := e.(type) {
	case *probe.Const:
		g.load(e, asm.R0)
	case *probe.Arg:
		return g.arg(e.N)
	case *probe.Reg:
		if !g.direct(e) {
			return fmt.Errorf("%w: register %q", ErrUnsupported, e.Name)
		}
		g.load(e, asm.R0)
	case probe.Builtin:
		return g.builtin(e)
	case *probe.Unary:
		return g.unary(e)
	case *probe.Binary:
		return g.binary(e)
	case *probe.Ternary:
		return g.ternary(e)
	case *probe.Cast:
		if err := g.expr(e.X); err != nil {
			return err
		}
		g.norm(e.To)
	case *probe.Deref:
		if err := g.expr(e.Addr); err != nil {
			return err
		}
		g.read(e.T)
	case *probe.Ident:
		return fmt.Errorf("%w: unbound name %q", ErrUnsupported, e.Name)
	case *probe.StrOf, *probe.StrLit:
		return fmt.Errorf("%w: string %s used as a number", ErrUnsupported, e)
	default:
		return fmt.Errorf("%w: expression %T", ErrUnsupported, e)
	}
	return nil
}

// read replaces the address in R0 by the t.Size bytes of user memory there.
// A failed read zeroes its destination.
func (g *exprGen) read(t probe.Type) {
	size := t.Size
	if size == 0 {
		size = 8
	}
	ok := g.label()
	g.emit(asm.Mov.Reg(asm.R3, asm.R0))
	g.readInto(asm.RFP, slotTmp, int32(size))
	g.emit(asm.JEq.Imm(asm.R0, 0, ok))
	g.setFault()
	g.mark(ok)
	g.emit(asm.LoadMem(asm.R0, asm.RFP, slotTmp, sizeOf(size)))
	g.norm(t)
}

func sizeOf(n uint8) asm.Size {
	switch n {
	case 1:
		return asm.Byte
	case 2:
		return asm.Half
	case 4:
		return asm.Word
	}
	return asm.DWord
}

// arg loads the n-th integer argument: a register, or a stack slot above
// the return address.
func (g *exprGen) arg(n int) error {
	regs := argRegs[g.abi]
	switch {
	case n < 1:
		return fmt.Errorf("%w: argument %d", ErrUnsupported, n)
	case n <= len(regs):
		g.emit(asm.LoadMem(asm.R0, asm.R6, regs[n-1], asm.DWord))
	default:
		g.emit(
			asm.LoadMem(asm.R0, asm.R6, regSP, asm.DWord),
			asm.Add.Imm(asm.R0, int32(8*(n-len(regs)))),
		)
		g.read(probe.U64)
	}
	return nil
}

func (g *exprGen) builtin(b probe.Builtin) error {
	switch b {
	case probe.BuiltinPID:
		g.emit(asm.FnGetCurrentPidTgid.Call(), asm.RSh.Imm(asm.R0, 32))
	case probe.BuiltinTID:
		g.emit(asm.FnGetCurrentPidTgid.Call(), asm.LSh.Imm(asm.R0, 32), asm.RSh.Imm(asm.R0, 32))
	case probe.BuiltinRet:
		if g.kind != probe.Return {
			return fmt.Errorf("%w: ret in an entry probe", ErrUnsupported)
		}
		g.emit(asm.LoadMem(asm.R0, asm.R6, retReg, asm.DWord))
	default:
		return fmt.Errorf("%w: builtin %d", ErrUnsupported, b)
	}
	return nil
}

func (g *exprGen) unary(e *probe.Unary) error {
	if err := g.expr(e.X); err != nil {
		return err
	}
	switch e.Op {
	case probe.OpNeg:
		g.emit(asm.Neg.Imm(asm.R0, 0))
	case probe.OpCompl:
		g.emit(asm.Xor.Imm(asm.R0, -1))
	case probe.OpNot:
		g.emit(asm.Mov.Reg(asm.R1, asm.R0), asm.Mov.Imm(asm.R0, 0))
		g.compare(asm.JEq.Imm(asm.R1, 0, ""))
		return nil
	default:
		return fmt.Errorf("%w: unary %s", ErrUnsupported, e.Op)
	}
	g.norm(e.Type())
	return nil
}

// compare sets R0 to 1 when jump (whose target it fills in) is taken, else 0.
func (g *exprGen) compare(jump asm.Instruction) {
	t := g.label()
	g.emit(asm.Mov.Imm(asm.R2, 1), jump.WithReference(t), asm.Mov.Imm(asm.R2, 0))
	g.mark(t)
	g.emit(asm.Mov.Reg(asm.R0, asm.R2))
}

func (g *exprGen) ternary(e *probe.Ternary) error {
	els, end := g.label(), g.label()
	if err := g.expr(e.Cond); err != nil {
		return err
	}
	g.emit(asm.JEq.Imm(asm.R0, 0, els))
	if err := g.expr(e.Then); err != nil {
		return err
	}
	g.emit(asm.Ja.Label(end))
	g.mark(els)
	if err := g.expr(e.Else); err != nil {
		return err
	}
	g.mark(end)
	g.norm(e.T)
	return nil
}

// logic evaluates && and || with short circuit, to 0 or 1.
func (g *exprGen) logic(e *probe.Binary) error {
	short, end := g.label(), g.label()
	jump := asm.JEq // &&: a false operand decides
	val := int32(0)
	if e.Op == probe.OpLOr {
		jump, val = asm.JNE, 1
	}
	for _, x := range []probe.Expr{e.X, e.Y} {
		if err := g.expr(x); err != nil {
			return err
		}
		g.emit(jump.Imm(asm.R0, 0, short))
	}
	g.emit(asm.Mov.Imm(asm.R0, 1-val), asm.Ja.Label(end))
	g.mark(short)
	g.emit(asm.Mov.Imm(asm.R0, val))
	g.mark(end)
	return nil
}

var aluOps = map[probe.Op]asm.ALUOp{
	probe.OpAdd: asm.Add, probe.OpSub: asm.Sub, probe.OpMul: asm.Mul,
	probe.OpAnd: asm.And, probe.OpOr: asm.Or, probe.OpXor: asm.Xor,
}

var cmpOps = map[probe.Op][2]asm.JumpOp{ // unsigned, signed
	probe.OpEq: {asm.JEq, asm.JEq}, probe.OpNe: {asm.JNE, asm.JNE},
	probe.OpLt: {asm.JLT, asm.JSLT}, probe.OpLe: {asm.JLE, asm.JSLE},
	probe.OpGt: {asm.JGT, asm.JSGT}, probe.OpGe: {asm.JGE, asm.JSGE},
}

func (g *exprGen) binary(e *probe.Binary) error {
	if e.Op == probe.OpLAnd || e.Op == probe.OpLOr {
		return g.logic(e)
	}
	if e.X.Type().Str || e.Y.Type().Str {
		return g.strCompare(e)
	}
	if err := g.operands(e.X, e.Y); err != nil {
		return err
	}
	// As probe.Eval: an operation is signed when both operands are; a
	// shift's kind is its left operand's.
	signed := e.X.Type().Signed && e.Y.Type().Signed
	if op, ok := aluOps[e.Op]; ok {
		g.emit(op.Reg(asm.R0, asm.R1))
		g.norm(e.T)
		return nil
	}
	if ops, ok := cmpOps[e.Op]; ok {
		op := ops[0]
		if signed {
			op = ops[1]
		}
		g.compare(op.Reg(asm.R0, asm.R1, ""))
		return nil
	}
	switch e.Op {
	case probe.OpShl:
		g.emit(asm.And.Imm(asm.R1, 63), asm.LSh.Reg(asm.R0, asm.R1))
	case probe.OpShr:
		g.emit(asm.And.Imm(asm.R1, 63))
		if e.X.Type().Signed {
			g.emit(asm.ArSh.Reg(asm.R0, asm.R1))
		} else {
			g.emit(asm.RSh.Reg(asm.R0, asm.R1))
		}
	case probe.OpDiv, probe.OpMod:
		g.divide(e.Op == probe.OpMod, signed)
	default:
		return fmt.Errorf("%w: operator %s", ErrUnsupported, e.Op)
	}
	g.norm(e.T)
	return nil
}

// divide computes R0 / R1 or R0 % R1 with x/0 = 0 and x%0 = 0 (BPF itself
// leaves x%0 = x). Without the v4 ISA a signed division divides magnitudes
// and fixes the sign: the quotient's is sign(x)^sign(y), the remainder's
// sign(x), as in C and Go.
func (g *exprGen) divide(mod, signed bool) {
	zero, end := g.label(), g.label()
	g.emit(asm.JEq.Imm(asm.R1, 0, zero))
	op := asm.Div
	if mod {
		op = asm.Mod
	}
	switch {
	case !signed:
		g.emit(op.Reg(asm.R0, asm.R1))
	case g.v4:
		sop := asm.SDiv
		if mod {
			sop = asm.SMod
		}
		g.emit(sop.Reg(asm.R0, asm.R1))
	default:
		g.emit(asm.Mov.Reg(asm.R2, asm.R0))
		if !mod {
			g.emit(asm.Xor.Reg(asm.R2, asm.R1))
		}
		for _, r := range []asm.Register{asm.R0, asm.R1} {
			pos := g.label()
			g.emit(asm.JSGE.Imm(r, 0, pos))
			g.emit(asm.Neg.Imm(r, 0))
			g.mark(pos)
		}
		pos := g.label()
		g.emit(op.Reg(asm.R0, asm.R1), asm.JSGE.Imm(asm.R2, 0, pos), asm.Neg.Imm(asm.R0, 0))
		g.mark(pos)
	}
	g.emit(asm.Ja.Label(end))
	g.mark(zero)
	g.emit(asm.Mov.Imm(asm.R0, 0))
	g.mark(end)
}

func trunc(s string) string {
	if len(s) > probe.MaxStrLen {
		return s[:probe.MaxStrLen]
	}
	return s
}

// storeImm64 stores a sign-extended 32-bit immediate as a u64, which
// asm.StoreImm declines to encode for DWord.
func storeImm64(dst asm.Register, off int16, v int32) asm.Instruction {
	return asm.Instruction{OpCode: asm.StoreImmOp(asm.DWord), Dst: dst, Offset: off, Constant: int64(v)}
}

// The expression compiler's own output, for the differential test that
// checks it against the bytecode and the reference evaluator (package
// bytecode's tests run it with BPF_PROG_TEST_RUN).

// FaultSlot is the frame offset (from R10) of the fault flag the code of
// ExprInsns sets when a read faults; the caller zeroes it first.
const FaultSlot = slotFault

// ExprInsns is the code this engine generates for e under abi: with R6
// holding a struct pt_regs pointer, it leaves e's value in R0 and sets the
// 8-byte flag at FaultSlot when a read faults. It uses the frame below
// FaultSlot and R0–R5, R8, R9. Reads are those of a sleepable program
// when the kernel has them (load with BPF_F_SLEEPABLE). String-valued e
// is refused with ErrUnsupported.
func ExprInsns(e probe.Expr, abi probe.ABI, kind probe.Kind, v4 bool) (asm.Instructions, error) {
	if e.Type().Str {
		return nil, fmt.Errorf("%s: %w: a string value", e, ErrUnsupported)
	}
	g := &exprGen{abi: abi, kind: kind, v4: v4, rd: kernelReads()}
	if err := g.expr(e); err != nil {
		return nil, err
	}
	if g.pending != "" {
		g.emit(asm.Mov.Reg(asm.R0, asm.R0))
	}
	return g.insns, nil
}
