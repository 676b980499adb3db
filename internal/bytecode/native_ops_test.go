//go:build linux && amd64

package bytecode

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/utap/utap/internal/x86"
	"github.com/utap/utap/probe"
)

// edge are operands where division, shifts, extends and comparisons
// differ between the CPU and Go or between signed and unsigned.
var edge = []uint64{
	0, 1, 2, 7, 63, 64, 65, 127, 128, 255, 256, 0x7fff, 0x8000, 0xffff,
	0x7fffffff, 0x80000000, 0xffffffff, 1 << 32, math.MaxInt64, 1 << 63,
	1<<63 + 1, math.MaxUint64, math.MaxUint64 - 1, math.MaxUint64 - 63,
}

// checkOp runs p natively on every pair of edge values as arguments 1 and
// 2 (rdi, rsi) and compares it with the interpreter.
func checkOp(t *testing.T, p *Program) {
	t.Helper()
	f, err := compileNative(t, p, probe.ABISysV, 0x401000)
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	defer f.Close()
	for _, x := range edge {
		for _, y := range edge {
			frame := make([]uint64, NativeVRegBase)
			frame[7], frame[6] = x, y
			env := &frameEnv{frame: frame, abi: probe.ABISysV}
			want, err := p.EvalArgs(env.args(), env)
			if err != nil {
				t.Fatal(err)
			}
			if got := runNative(t, f, p, frame); got != want.Int {
				t.Fatalf("%s\nwith %#x, %#x: native %#x, interpreter %#x", p, x, y, got, want.Int)
			}
		}
	}
}

func prog(code ...insn) *Program {
	p := &Program{code: code, typ: probe.U64, scratch: new(scratch)}
	for _, in := range code {
		p.regs = max(p.regs, int(in.dst)+1, int(in.a)+1, int(in.b)+1)
	}
	return p
}

// TestNativeOps checks every integer operation on the edge values, the
// immediate forms with each edge value as the immediate (shift counts of
// 64 and more included, which the interpreter does not mask).
func TestNativeOps(t *testing.T) {
	args := []insn{{op: opArg, dst: 1, imm: 1}, {op: opArg, dst: 2, imm: 2}}
	for op := opMov; op <= opZext32; op++ {
		checkOp(t, prog(append(args, insn{op: op, dst: 0, a: 1})...))
	}
	for op := opAdd; op <= opSLe; op++ {
		checkOp(t, prog(append(args, insn{op: op, dst: 0, a: 1, b: 2})...))
		checkOp(t, prog(append(args, insn{op: op, dst: 2, a: 2, b: 2}, insn{op: opMov, a: 2})...))
	}
	for op := opAddI; op <= opSGeI; op++ {
		for _, k := range edge {
			checkOp(t, prog(append(args, insn{op: op, dst: 0, a: 1, imm: k})...))
		}
	}
}

// TestNativeControl checks jumps, the rip and rsp registers and a
// program that leaves by a jump past its end.
func TestNativeControl(t *testing.T) {
	p := prog(
		insn{op: opArg, dst: 1, imm: 1},
		insn{op: opJz, a: 1, imm: 4},
		insn{op: opReg, dst: 0, imm: uint64(regIndex("rip"))},
		insn{op: opJmp, imm: 99},
		insn{op: opReg, dst: 0, imm: uint64(regIndex("rsp"))},
	)
	f, err := compileNative(t, p, probe.ABISysV, 0x401136)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	frame := make([]uint64, NativeVRegBase)
	frame[4] = 0x7ffc0000
	if got := runNative(t, f, p, frame); got != 0x7ffc0000 {
		t.Errorf("arg1 = 0: %#x, want rsp", got)
	}
	frame[7] = 1
	if got := runNative(t, f, p, frame); got != 0x401136 {
		t.Errorf("arg1 = 1: %#x, want rip", got)
	}
	c, _ := CompileCond(nil)
	f, err = compileNative(t, c, probe.ABIGoRegs, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if runNative(t, f, c, frame) == 0 {
		t.Error("the empty condition is false")
	}
}

// TestNativeRefused checks that what needs the tracer's help is refused
// before any code is emitted.
func TestNativeRefused(t *testing.T) {
	var progs []*Program
	for _, op := range []opcode{opStrEq, opStrEqS, opStr, opBuf, opPID, opTID, numOps} {
		progs = append(progs, prog(insn{op: opConst, dst: 1, imm: 1}, insn{op: op, dst: 0, a: 1}))
	}
	progs = append(progs,
		prog(insn{op: opArg, imm: 7}), prog(insn{op: opArg, imm: 0}),
		prog(insn{op: opReg, imm: uint64(len(regNames))}))
	for _, e := range []probe.Expr{
		&probe.StrLit{Val: "x"},
		&probe.StrOf{Addr: &probe.Arg{N: 1}},
		&probe.Binary{Op: probe.OpEq, X: &probe.StrOf{Addr: &probe.Arg{N: 1}}, Y: &probe.StrLit{Val: strings.Repeat("x", maxNativeLit+1)}, T: probe.S64},
		&probe.Binary{Op: probe.OpEq, X: &probe.StrOf{Addr: &probe.Arg{N: 1}}, Y: &probe.StrOf{Addr: &probe.Arg{N: 2}}, T: probe.S64},
		probe.BuiltinPID,
		&probe.Arg{N: 7},
	} {
		p, err := Compile(e)
		if err != nil {
			t.Fatal(err)
		}
		progs = append(progs, p)
	}
	for _, p := range progs {
		a := x86.NewAsm()
		err := p.Native(a, probe.ABISysV, 0)
		if !errors.Is(err, ErrNotNative) {
			t.Errorf("%s: %v, want ErrNotNative", p, err)
		}
		if code, err := a.Assemble(); len(code) != 0 || err != nil {
			t.Errorf("%s: emitted % x (%v)", p, code, err)
		}
	}
	if err := prog(insn{op: opArg, imm: 9}).Native(x86.NewAsm(), probe.ABIGoRegs, 0); err != nil {
		t.Errorf("Go ABI argument 9: %v", err)
	}
	if err := prog(insn{op: opArg, imm: 10}).Native(x86.NewAsm(), probe.ABIGoRegs, 0); !errors.Is(err, ErrNotNative) {
		t.Errorf("Go ABI argument 10: %v", err)
	}
}
