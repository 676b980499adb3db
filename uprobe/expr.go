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
	slotFault  = -8  // nonzero once a memory read faulted
	slotTmp    = -16 // target of scalar reads, map keys
	slotAddr   = -24 // an address kept across helper calls
	slotDur    = -32 // return probes: the call's duration
	slotKey    = -56 // return probes: the entry-time map key (keySize bytes)
	slotStack  = -64 // expression-stack slot d is at slotStack-8*d
	strBufSize = probe.MaxStrLen + 8
	slotStrBuf = slotStack - 8*(MaxDepth-1) - strBufSize // string comparisons
	chunkLen   = 32                                      // str() == str(): the second is read this many bytes at a time
	slotChunk  = slotStrBuf - (chunkLen + 8)
	// return probes: the entry-time map's value (returns.go): the entry
	// time, then the argument registers at entry.
	slotEntry   = slotChunk - timesValueSize
	frameBottom = slotEntry
)

const _ = uint(512 + frameBottom) // the frame fits in BPF's 512 bytes

// exprGen compiles an expression into R0: the tree walk, the arithmetic
// and the comparisons (arith.go). It hands off where values wait
// (regAlloc), tracee memory reads (memReader) and string comparisons
// (strGen). R6 holds the pt_regs pointer for the whole program; R1–R5 are
// scratch, since helpers clobber them.
type exprGen struct {
	*code
	regs *regAlloc
	mem  *memReader
	str  *strGen
	abi  probe.ABI
	kind probe.Kind
	v4   bool // signed division in the ISA (6.6+)
}

// newExprGen is the expression compiler writing to c; rd is how tracee
// memory is read.
func newExprGen(c *code, abi probe.ABI, kind probe.Kind, v4 bool, rd reads) *exprGen {
	g := &exprGen{code: c, abi: abi, kind: kind, v4: v4,
		regs: &regAlloc{code: c, abi: abi, kind: kind}, mem: &memReader{code: c, rd: rd}}
	g.str = &strGen{code: c, mem: g.mem, regs: g.regs, expr: g.expr}
	return g
}

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
		g.regs.load(e, asm.R0)
	case *probe.Arg:
		return g.arg(e.N)
	case *probe.Reg:
		if !g.regs.direct(e) {
			return fmt.Errorf("%w: register %q", ErrUnsupported, e.Name)
		}
		g.regs.load(e, asm.R0)
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

// read replaces the address in R0 by the value of type t there.
func (g *exprGen) read(t probe.Type) {
	g.mem.value(t.Size)
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
		if b.EntryArgN() > 0 && g.kind == probe.Return {
			g.regs.load(b, asm.R0)
			return nil
		}
		return fmt.Errorf("%w: builtin %d", ErrUnsupported, b)
	}
	return nil
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
	g := newExprGen(&code{}, abi, kind, v4, kernelReads())
	if err := g.expr(e); err != nil {
		return nil, err
	}
	if g.pending != "" {
		g.emit(asm.Mov.Reg(asm.R0, asm.R0))
	}
	return g.insns, nil
}
