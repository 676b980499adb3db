package x86

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/arch/x86/x86asm"
)

var regNames64 = [16]string{"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"}
var regNames32 = [16]string{"eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi", "r8d", "r9d", "r10d", "r11d", "r12d", "r13d", "r14d", "r15d"}
var regNames8 = [16]string{"al", "cl", "dl", "bl", "spl", "bpl", "sil", "dil", "r8b", "r9b", "r10b", "r11b", "r12b", "r13b", "r14b", "r15b"}

// base is where decoded code is put: x86asm prints jumps at 0 relatively.
const base = 0x1000

// disasm decodes all of code into Intel and GNU text, one instruction a
// line, failing on bytes that do not decode.
func disasm(t *testing.T, code []byte) (intel, gnu string) {
	t.Helper()
	var is, gs []string
	for pc := 0; pc < len(code); {
		in, err := x86asm.Decode(code[pc:], 64)
		if err != nil {
			t.Fatalf("decode % x at %d: %v", code, pc, err)
		}
		is = append(is, x86asm.IntelSyntax(in, base+uint64(pc), nil))
		gs = append(gs, x86asm.GNUSyntax(in, base+uint64(pc), nil))
		pc += in.Len
	}
	return strings.Join(is, "; "), strings.Join(gs, "; ")
}

// one assembles what emit appends and checks its text and length.
func one(t *testing.T, emit func(a *Asm), intel, gnu string, size int) {
	t.Helper()
	a := NewAsm()
	emit(a)
	code, err := a.Assemble()
	if err != nil {
		t.Fatal(err)
	}
	i, g := disasm(t, code)
	if i != intel || (gnu != "" && g != gnu) || (size > 0 && len(code) != size) {
		t.Errorf("% x = %q / %q (%d bytes), want %q / %q (%d)", code, i, g, len(code), intel, gnu, size)
	}
}

func TestAsmOps(t *testing.T) {
	for _, c := range []struct {
		emit       func(a *Asm)
		intel, gnu string
		size       int
	}{
		{func(a *Asm) { a.MovRR(RAX, R12) }, "mov rax, r12", "mov %r12,%rax", 3},
		{func(a *Asm) { a.MovRI(RAX, 0) }, "mov eax, 0x0", "mov $0x0,%eax", 5},
		{func(a *Asm) { a.MovRI(R9, 0xffffffff) }, "mov r9d, -0x1", "mov $-0x1,%r9d", 6},
		{func(a *Asm) { a.MovRI(R9, ^uint64(0)) }, "mov r9, -0x1", "mov $-0x1,%r9", 7},
		{func(a *Asm) { a.MovRI(RDX, 1<<32) }, "mov rdx, 0x100000000", "", 10},
		{func(a *Asm) { a.Load32(RAX, Mem{RBX, 0x100}) }, "mov eax, dword ptr [rbx+0x100]", "", 6},
		{func(a *Asm) { a.Load8(RSI, Mem{RBX, -8}) }, "movzx rsi, byte ptr [rbx-0x8]", "movzbq -0x8(%rbx),%rsi", 5},
		{func(a *Asm) { a.StoreI32(Mem{RBX, 8}, -1) }, "mov qword ptr [rbx+0x8], -0x1", "movq $-0x1,0x8(%rbx)", 8},
		{func(a *Asm) { a.StoreI32L(Mem{RSP, 8}, 0xffffffff) }, "mov dword ptr [rsp+0x8], -0x1", "movl $-0x1,0x8(%rsp)", 8},
		{func(a *Asm) { a.Lea(RAX, Mem{RSP, -128}) }, "lea rax, ptr [rsp-0x80]", "lea -0x80(%rsp),%rax", 5},
		{func(a *Asm) { a.Push(R12); a.Pop(RBX) }, "push r12; pop rbx", "push %r12; pop %rbx", 3},
		{func(a *Asm) { a.Pushfq(); a.Popfq() }, "pushfq; popfq", "", 2},
		{func(a *Asm) { a.RR(ADD, RAX, RCX) }, "add rax, rcx", "add %rcx,%rax", 3},
		{func(a *Asm) { a.RR(SUB, R8, RCX) }, "sub r8, rcx", "", 3},
		{func(a *Asm) { a.RR(AND, RAX, R15) }, "and rax, r15", "", 3},
		{func(a *Asm) { a.RR(OR, RDX, RCX) }, "or rdx, rcx", "", 3},
		{func(a *Asm) { a.RR(XOR, RAX, RCX) }, "xor rax, rcx", "", 3},
		{func(a *Asm) { a.RR(IMUL, RAX, R9) }, "imul rax, r9", "imul %r9,%rax", 4},
		{func(a *Asm) { a.RR(TEST, RAX, RCX) }, "test rax, rcx", "", 3},
		{func(a *Asm) { a.RR(CMP, RAX, RCX) }, "cmp rax, rcx", "cmp %rcx,%rax", 3},
		{func(a *Asm) { a.RI(CMP, RSI, -5) }, "cmp rsi, -0x5", "cmp $-0x5,%rsi", 4},
		{func(a *Asm) { a.RI(TEST, RDX, 1) }, "test rdx, 0x1", "", 7},
		{func(a *Asm) { a.RI(ADD, RAX, 1) }, "add rax, 0x1", "", 4},
		{func(a *Asm) { a.RI(SUB, RSP, 1000) }, "sub rsp, 0x3e8", "sub $0x3e8,%rsp", 7},
		{func(a *Asm) { a.RI(AND, RAX, -1) }, "and rax, -0x1", "", 4},
		{func(a *Asm) { a.RI(OR, RAX, 3) }, "or rax, 0x3", "", 4},
		{func(a *Asm) { a.RI(XOR, RAX, 0x12345) }, "xor rax, 0x12345", "", 6},
		{func(a *Asm) { a.RI(IMUL, R10, 7) }, "imul r10, r10, 0x7", "imul $0x7,%r10,%r10", 4},
		{func(a *Asm) { a.RR(SHL, RAX, RCX); a.RR(SHR, RDI, RCX); a.RR(SAR, R8, RCX) }, "shl rax, cl; shr rdi, cl; sar r8, cl", "", 9},
		{func(a *Asm) { a.RI(SHL, RAX, 2); a.RI(SHR, RAX, 3); a.RI(SAR, R9, 63) }, "shl rax, 0x2; shr rax, 0x3; sar r9, 0x3f", "", 12},
		{func(a *Asm) { a.Bsr(RCX, R8) }, "bsr rcx, r8", "", 4},
		{func(a *Asm) { a.Neg(RAX); a.Not(R11) }, "neg rax; not r11", "", 6},
		{func(a *Asm) { a.Cqo(); a.Div(RCX); a.Idiv(R11) }, "cqo; div rcx; idiv r11", "cqto; div %rcx; idiv %r11", 8},
		{func(a *Asm) { a.SetccZx(L, RDI) }, "setl dil; movzx rdi, dil", "", 8},
		{func(a *Asm) { a.Extend(SX8, RAX, RSI) }, "movsx rax, sil", "movsbq %sil,%rax", 4},
		{func(a *Asm) { a.Extend(SX16, RAX, RCX) }, "movsx rax, cx", "movswq %cx,%rax", 4},
		{func(a *Asm) { a.Extend(SX32, R8, RCX) }, "movsxd r8, ecx", "", 3},
		{func(a *Asm) { a.Extend(ZX8, RAX, R9) }, "movzx rax, r9b", "movzbq %r9b,%rax", 4},
		{func(a *Asm) { a.Extend(ZX16, RAX, RCX) }, "movzx rax, cx", "movzwq %cx,%rax", 4},
		{func(a *Asm) { a.Extend(ZX32, RAX, R10) }, "mov eax, r10d", "mov %r10d,%eax", 3},
		{func(a *Asm) { a.LockXadd(Mem{RBX, 0}, RAX) }, "lock xadd qword ptr [rbx], rax", "", 5},
		{func(a *Asm) { a.LockCmpxchg(Mem{R12, 8}, RCX) }, "lock cmpxchg qword ptr [r12+0x8], rcx", "", 7},
		{func(a *Asm) { a.LockInc(Mem{RBX, 16}) }, "lock inc qword ptr [rbx+0x10]", "lock incq 0x10(%rbx)", 5},
		{func(a *Asm) { a.AddM(Mem{RCX, 16}, R8) }, "add qword ptr [rcx+0x10], r8", "add %r8,0x10(%rcx)", 4},
		{func(a *Asm) { a.IncM(Mem{RCX, 64}) }, "inc qword ptr [rcx+0x40]", "incq 0x40(%rcx)", 4},
		{func(a *Asm) { a.Rdtsc(); a.Rdfsbase(R11) }, "rdtsc; rdfsbase r11", "rdtsc; rdfsbase %r11", 7},
		{func(a *Asm) { a.Raw(0x0f, 0x1f, 0x00); a.Raw(0xc3) }, "nop dword ptr [rax], eax; ret", "", 4},
	} {
		one(t, c.emit, c.intel, c.gnu, c.size)
	}
}

// TestAsmOperands covers every register and the bases that need a SIB
// byte (rsp, r12) or a displacement (rbp, r13).
func TestAsmOperands(t *testing.T) {
	for r := RAX; r <= R15; r++ {
		n := regNames64[r]
		for _, d := range []int32{0, -8, 0x1000} {
			m := "[" + n + "]"
			if d < 0 {
				m = fmt.Sprintf("[%s-%#x]", n, -d)
			} else if d > 0 {
				m = fmt.Sprintf("[%s+%#x]", n, d)
			}
			one(t, func(a *Asm) { a.Load(r, Mem{r, d}) }, "mov "+n+", qword ptr "+m, "", 0)
			one(t, func(a *Asm) { a.Store(Mem{r, d}, RDX) }, "mov qword ptr "+m+", rdx", "", 0)
		}
		one(t, func(a *Asm) { a.MovRR(R15-r, r) }, "mov "+regNames64[R15-r]+", "+n, "", 3)
		one(t, func(a *Asm) { a.MovRI(r, 1) }, "mov "+regNames32[r]+", 0x1", "", 0)
	}
}

var ccNames = [...]string{E: "z", NE: "nz", B: "b", AE: "nb", BE: "be", A: "nbe", L: "l", GE: "nl", LE: "le", G: "nle", S: "s", NS: "ns", O: "o", NO: "no"}

func TestAsmConditions(t *testing.T) {
	for cc, s := range ccNames {
		for r := RAX; r <= R15; r++ {
			if r == RSP { // the Go assembler has no spl operand
				continue
			}
			one(t, func(a *Asm) { a.Setcc(CC(cc), r) }, "set"+s+" "+regNames8[r], "", 0)
		}
		one(t, func(a *Asm) { l := a.NewLabel(); a.Bind(l); a.Jcc(CC(cc), l) }, "j"+s+" 0x1000", "", 2)
	}
}

// TestAsmLabels checks short and long jumps both ways, labels at the
// start and end, several labels at one place, and Raw bytes in between.
func TestAsmLabels(t *testing.T) {
	a := NewAsm()
	start, back, fwd, far, end, end2 := a.NewLabel(), a.NewLabel(), a.NewLabel(), a.NewLabel(), a.NewLabel(), a.NewLabel()
	a.Bind(start)
	a.Jcc(E, fwd) // 0: short forward
	a.Bind(back)
	a.Raw(0xaa, 0xbb) // 2
	a.Jmp(far)        // 4: long forward
	a.Bind(fwd)
	a.Jcc(NE, back)                           // 9: short backward
	a.Raw(bytes.Repeat([]byte{0x90}, 200)...) // 11
	a.Bind(far)
	a.Jmp(start) // 211: long backward
	a.Bind(end)
	a.Bind(end2)
	code, err := a.Assemble()
	if err != nil {
		t.Fatal(err)
	}
	want := map[Label]int{start: 0, back: 2, fwd: 9, far: 211, end: 216, end2: 216}
	for l, off := range want {
		if got := a.Offset(l); got != off {
			t.Errorf("Offset(%d) = %d, want %d", l, got, off)
		}
	}
	if len(code) != 216 || !bytes.Equal(code[2:4], []byte{0xaa, 0xbb}) || code[11] != 0x90 || code[210] != 0x90 {
		t.Fatalf("code % x", code)
	}
	for _, c := range []struct {
		at   int
		text string
	}{{0, "jz 0x1009"}, {4, "jmp 0x10d3"}, {9, "jnz 0x1002"}, {211, "jmp 0x1000"}} {
		in, err := x86asm.Decode(code[c.at:], 64)
		if err != nil {
			t.Fatal(err)
		}
		if s := x86asm.IntelSyntax(in, base+uint64(c.at), nil); s != c.text {
			t.Errorf("at %d: %s, want %s", c.at, s, c.text)
		}
	}
}

func TestAsmErrors(t *testing.T) {
	a := NewAsm()
	a.Jmp(a.NewLabel())
	if _, err := a.Assemble(); err == nil || !strings.Contains(err.Error(), "never bound") {
		t.Errorf("unbound label: %v", err)
	}
	a = NewAsm()
	l := a.NewLabel()
	a.Bind(l)
	a.Bind(l)
	if _, err := a.Assemble(); err == nil {
		t.Error("label bound twice: no error")
	}
	// An instruction the assembler refuses: its diagnostic is the error.
	a = NewAsm()
	a.Setcc(E, RSP) // no spl in Go's assembler
	if _, err := a.Assemble(); err == nil {
		t.Error("invalid instruction: no error")
	} else {
		t.Log(err)
	}
	// Forms the tables do not have fail at Assemble, naming the operation.
	for _, c := range []struct {
		emit func(a *Asm)
		want string
	}{
		{func(a *Asm) { a.RR(SHL, RAX, RDX) }, "shl by register 2: the count must be in rcx"},
		{func(a *Asm) { a.RR(numOps, RAX, RCX) }, "register form of Op(11)"},
		{func(a *Asm) { a.RI(Op(200), RAX, 1) }, "immediate form of Op(200)"},
		{func(a *Asm) { a.Extend(numExts, RAX, RCX) }, "extension 6"},
	} {
		a = NewAsm()
		c.emit(a)
		a.Raw(0x90)
		if _, err := a.Assemble(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
	if code, err := NewAsm().Assemble(); len(code) != 0 || err != nil {
		t.Errorf("empty: % x, %v", code, err)
	}
}
