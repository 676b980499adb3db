package bytecode

import (
	"encoding/binary"
	"errors"
	"math/rand"
	"runtime"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/features"
	"golang.org/x/sys/unix"

	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/probe"
	"github.com/utap/utap/uprobe"
)

// The eBPF leg runs the uprobe engine's code for an expression in a
// BPF_PROG_TYPE_SYSCALL program, which BPF_PROG_TEST_RUN runs in the
// calling thread with a context the test supplies: a struct pt_regs, then
// the value and the fault flag the program writes back. Its memory reads
// (bpf_probe_read_user) read this process, hence the shared arena.
const (
	ptRegsSize = 168
	ctxValue   = ptRegsSize
	ctxFault   = ptRegsSize + 8
	ctxSize    = ptRegsSize + 16
)

// pt_regs offsets of the registers a testEnv sets (x86_64).
var ptRegsArgs = [6]int{112, 104, 96, 88, 72, 64} // di si dx cx r8 r9

const (
	ptRegsAX = 80
	ptRegsSP = 152
)

// ptRegsOther are the pt_regs offsets of testEnv.gp's registers
// (arch/x86/include/asm/ptrace.h), written independently of the uprobe
// engine's table so that this test checks it.
var ptRegsOther = map[string]int{
	"rbx": 40, "rbp": 32, "r10": 56, "r11": 48, "r12": 24, "r13": 16, "r14": 8, "r15": 0, "rip": 128,
}

func loadExpr(tb testing.TB, e probe.Expr, v4 bool) (*ebpf.Program, error) {
	insns, err := uprobe.ExprInsns(e, probe.ABISysV, probe.Return, v4)
	if err != nil {
		return nil, err
	}
	prog := asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.Instruction{OpCode: asm.StoreImmOp(asm.DWord), Dst: asm.RFP, Offset: uprobe.FaultSlot},
	}
	prog = append(prog, insns...)
	prog = append(prog,
		asm.StoreMem(asm.R6, ctxValue, asm.R0, asm.DWord),
		asm.LoadMem(asm.R1, asm.RFP, uprobe.FaultSlot, asm.DWord),
		asm.StoreMem(asm.R6, ctxFault, asm.R1, asm.DWord),
		asm.Mov.Imm(asm.R0, 0),
		asm.Return(),
	)
	p, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Type:         ebpf.Syscall,
		License:      "GPL",
		Flags:        unix.BPF_F_SLEEPABLE,
		Instructions: prog,
	})
	if err != nil {
		tb.Fatalf("load %s: %v", e, err)
	}
	return p, nil
}

// runBPF evaluates a loaded expression at env.
func runBPF(tb testing.TB, p *ebpf.Program, env *testEnv) (uint64, bool) {
	ctx := make([]byte, ctxSize)
	for i, off := range ptRegsArgs {
		binary.LittleEndian.PutUint64(ctx[off:], env.regs[i])
	}
	binary.LittleEndian.PutUint64(ctx[ptRegsAX:], env.ret)
	binary.LittleEndian.PutUint64(ctx[ptRegsSP:], env.sp)
	for name, off := range ptRegsOther {
		binary.LittleEndian.PutUint64(ctx[off:], env.gp[regIndex(name)])
	}
	out := make([]byte, ctxSize)
	if _, err := p.Run(&ebpf.RunOptions{Context: ctx, ContextOut: out}); err != nil {
		tb.Fatalf("test run: %v", err)
	}
	return binary.LittleEndian.Uint64(out[ctxValue:]), binary.LittleEndian.Uint64(out[ctxFault:]) != 0
}

// TestDifferentialBPF checks reference == bytecode == eBPF on random
// integer expressions, with and without the v4 ISA's signed division.
func TestDifferentialBPF(t *testing.T) {
	need.Root(t)
	// pid and tid are those of the thread that runs the program.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	pid, tid := uint64(unix.Getpid()), uint64(unix.Gettid())
	a := testArena(t)
	n := 1500
	if testing.Short() {
		n = 200
	}
	v4 := features.HaveV4ISA() == nil
	var ran, refused, elsewhere int
	for seed := range int64(n) {
		g := &gen{r: rand.New(rand.NewSource(seed)), a: a, builtin: true, regs: true}
		e := g.expr(2 + int(seed%6))
		isa := v4 && seed%2 == 0
		prog, err := loadExpr(t, e, isa)
		if errors.Is(err, uprobe.ErrUnsupported) || errors.Is(err, uprobe.ErrTooDeep) {
			refused++
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		bc, err := Compile(e)
		if err != nil {
			t.Fatalf("compile %s: %v", e, err)
		}
		g.r = rand.New(rand.NewSource(seed ^ 0xbbf))
		for range 6 {
			env := g.env(pid, tid)
			ref, refErr := probe.Eval(e, env)
			v, fault := runBPF(t, prog, env)
			if env.elsewhere {
				elsewhere++
			} else if fault != (refErr != nil) || !fault && v != ref.Int {
				t.Fatalf("eBPF (v4 %v) of %s\nwith args %#x sp %#x ret %#x:\n%#x fault %v, reference %#x error %v\n%s",
					isa, e, env.regs, env.sp, env.ret, v, fault, ref.Int, refErr, mustInsns(e, isa))
			}
			got, err := bc.EvalArgs(env.regs[:], env)
			if d := same(ref, refErr, got, err); d != "" {
				t.Fatalf("bytecode of %s: %s\n%s", e, d, bc)
			}
			ran++
		}
		prog.Close()
	}
	t.Logf("%d hits agree on all three legs (%d of them on the Go legs only: they read this process outside the arena); %d expressions refused by the uprobe engine", ran, elsewhere, refused)
}

func mustInsns(e probe.Expr, v4 bool) asm.Instructions {
	insns, _ := uprobe.ExprInsns(e, probe.ABISysV, probe.Return, v4)
	return insns
}

// TestDeepBPF runs 64-level expressions (the parser's limit) on the eBPF
// leg: each either agrees with the reference or is refused with the
// uprobe engine's ErrTooDeep — never a verifier dump.
func TestDeepBPF(t *testing.T) {
	need.Root(t)
	a := testArena(t)
	env := &testEnv{a: a, regs: [6]uint64{3, 5, a.ptrs[1], 7, 11, 13}, sp: a.ptrs[0]}
	for name, e := range deepExprs(64) {
		prog, err := loadExpr(t, e, features.HaveV4ISA() == nil)
		if errors.Is(err, uprobe.ErrTooDeep) {
			t.Logf("%s: refused: %v", name, err)
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		ref, refErr := probe.Eval(e, env)
		v, fault := runBPF(t, prog, env)
		if fault != (refErr != nil) || !fault && v != ref.Int {
			t.Errorf("%s: %#x fault %v, reference %#x error %v", name, v, fault, ref.Int, refErr)
		}
		t.Logf("%s: agrees (%#x, fault %v)", name, v, fault)
		prog.Close()
	}
}
