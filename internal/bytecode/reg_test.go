package bytecode

import (
	"strings"
	"testing"

	"github.com/utap/utap/probe"
)

// TestReg compiles USDT operands (a register, a memory operand off one, a
// narrowed register) and evaluates them against the reference.
func TestReg(t *testing.T) {
	a := testArena(t)
	env := &testEnv{a: a, regs: [6]uint64{1, 2, 0x1234_5678_9abc_def0, 4, 5, 6}, sp: a.ptrs[0], ret: 0xfffffffffffffffe}
	env.gp[regIndex("rbp")] = a.ptrs[3] - 8
	env.gp[regIndex("rip")] = 0x401000
	rbp8 := &probe.Binary{Op: probe.OpAdd, X: &probe.Reg{Name: "rbp"}, Y: &probe.Const{Val: 8, T: probe.S64}, T: probe.U64}
	for _, tt := range []struct {
		e    probe.Expr
		code string
	}{
		{&probe.Reg{Name: "rip"}, "reg    r0, %rip"},
		{&probe.Cast{To: probe.S32, X: &probe.Reg{Name: "rax"}}, "reg    r0, %rax\n1   sext32 r0, r0"},
		{&probe.Cast{To: probe.U8, X: &probe.Reg{Name: "rdx"}}, "reg    r0, %rdx\n1   zext8  r0, r0"},
		{&probe.Deref{T: probe.S64, Addr: rbp8}, "reg    r0, %rbp\n1   ld64   r0, [r0+8]"},
		{&probe.Reg{Name: "r15"}, "reg    r0, %r15"},
	} {
		check(t, tt.e, env)
		p, err := Compile(tt.e)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.String(); !strings.Contains(got, tt.code) {
			t.Errorf("%s compiles to\n%s\nwant %s", tt.e, got, tt.code)
		}
	}
	if _, err := Compile(&probe.Reg{Name: "eax"}); err == nil {
		t.Error("a register that is not a 64-bit general one compiled")
	}
}
