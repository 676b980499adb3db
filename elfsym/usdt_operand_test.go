//go:build linux && amd64

package elfsym

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/utap/utap/probe"
)

// TestParseOperand turns every operand form sdt.h emits into an
// expression, shown in probe's printed form.
func TestParseOperand(t *testing.T) {
	ctx := operandCtx{pc: 0x1000, lookup: func(name string) (uint64, bool) {
		a, ok := map[string]uint64{"counter": 0x4010, "counter.0": 0x4100}[name]
		return a, ok
	}}
	for _, tt := range []struct{ op, want string }{
		// registers, every width, signed and unsigned
		{"8@%rbx", "%rbx"},
		{"-8@%r12", "((s64)%r12)"},
		{"-4@%eax", "((s32)%rax)"},
		{"4@%eax", "((u32)%rax)"},
		{"-4@%ebp", "((s32)%rbp)"},
		{"-4@%r8d", "((s32)%r8)"},
		{"2@%cx", "((u16)%rcx)"},
		{"-2@%r9w", "((s16)%r9)"},
		{"-1@%al", "((s8)%rax)"},
		{"1@%sil", "((u8)%rsi)"},
		{"-1@%r8b", "((s8)%r8)"},
		{"1@%ah", "((u8)(%rax >> 8))"},
		{"-1@%dh", "((s8)(%rdx >> 8))"},
		{"8@%eax", "((u64)((u32)%rax))"}, // wider than the register: zero-extended
		{"%rdi", "%rdi"},                 // sdt v1: no size
		// memory
		{"-4@112(%rsp)", "(*(s32*)(%rsp + 112))"},
		{"8@-16(%rbp)", "(*(u64*)(%rbp + -16))"},
		{"8@0x10(%rbp)", "(*(u64*)(%rbp + 16))"},
		{"2@(%rdi)", "(*(u16*)%rdi)"},
		{"4@8(%rax,%rbx,4)", "(*(u32*)((%rax + (%rbx * 4)) + 8))"},
		{"-8@(%rax,%rcx)", "(*(s64*)(%rax + %rcx))"},
		{"1@16(,%rcx,8)", "(*(u8*)((%rcx * 8) + 16))"},
		// rip-relative and absolute: offsets from the probe (rip = pc)
		{"-8@counter(%rip)", "(*(s64*)(%rip + 12304))"},
		{"4@counter+8(%rip)", "(*(u32*)(%rip + 12312))"},
		{"4@counter.0-4(%rip)", "(*(u32*)(%rip + 12540))"},
		{"8@16(%rip)", "(*(u64*)(%rip + 16))"},
		{"8@(%rip)", "(*(u64*)%rip)"},
		{"8@0x404040", "(*(u64*)(%rip + 4206656))"},
		{"8@counter", "(*(u64*)(%rip + 12304))"},
		{"8@counter(%rax)", "(*(u64*)(%rax + (%rip + 12304)))"},
		// constants
		{"-1@$-3", "-3"},
		{"4@$42", "42"},
		{"8@$0x10", "16"},
		{"8@$counter", "(%rip + 12304)"},
	} {
		e, err := ctx.parseOperand(tt.op)
		if err != nil {
			t.Errorf("%s: %v", tt.op, err)
			continue
		}
		if got := e.String(); got != tt.want {
			t.Errorf("%s = %s, want %s", tt.op, got, tt.want)
		}
		size, signed := 8, false
		if s, _, ok := strings.Cut(tt.op, "@"); ok {
			fmt.Sscan(s, &size)
			signed, size = size < 0, max(size, -size)
		}
		if typ := e.Type(); int(typ.Size) != size || typ.Signed != signed {
			t.Errorf("%s has type %+v", tt.op, typ)
		}
	}
	for _, tt := range []struct{ op, want string }{
		{"3@%rax", "size 3"},
		{"4@%xmm0", "unknown register %xmm0"},
		{"8@%rip", "unknown register %rip"},
		{"8@nosuch(%rip)", "symbol nosuch is not in the symbol table"},
		{"8@foo@GOTPCREL(%rip)", "unsupported"},
		{"8@8(%eax)", "unsupported address register"},
		{"8@8(%rax,%rbx,3)", "bad scale"},
		{"8@8(%rip,%rax)", "takes no index"},
		{"8@", "empty"},
		{"4@8(%rax", "unsupported form"},
	} {
		_, err := ctx.parseOperand(tt.op)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), tt.op) {
			t.Errorf("%s: error %v, want one naming the operand and %q", tt.op, err, tt.want)
		}
	}
}

// regEnv is a probe.Env of registers and one memory region.
type regEnv struct {
	regs map[string]uint64
	base uint64
	mem  []byte
}

func (e *regEnv) Arg(int) (uint64, error)         { return 0, fmt.Errorf("no arguments") }
func (e *regEnv) Builtin(probe.Builtin) uint64    { return 0 }
func (e *regEnv) Reg(name string) (uint64, error) { return e.regs[name], nil }
func (e *regEnv) Read(addr uint64, p []byte) error {
	if addr < e.base || addr+uint64(len(p)) > e.base+uint64(len(e.mem)) {
		return fmt.Errorf("EFAULT at %#x", addr)
	}
	copy(p, e.mem[addr-e.base:])
	return nil
}

// TestOperandValues evaluates operands at a hit in a process whose object
// is loaded at a bias: a rip-relative operand reads the symbol's runtime
// address without being told the bias.
func TestOperandValues(t *testing.T) {
	const pc, counter, bias = 0x1170, 0x4010, 0x5555_5555_0000
	ctx := operandCtx{pc: pc, lookup: func(string) (uint64, bool) { return counter, true }}
	mem := make([]byte, 0x100)
	binary.LittleEndian.PutUint64(mem[0x10:], uint64(1<<64-41)) // counter = -41
	binary.LittleEndian.PutUint32(mem[0x80:], 0xfffffffe)       // a stack slot = -2
	env := &regEnv{
		regs: map[string]uint64{"rip": pc + bias, "rax": 0xffff_ffff_ffff_fe80, "rsp": bias + 0x4000 - 112 + 0x80, "rdx": 0x1234},
		base: bias + 0x4000, mem: mem,
	}
	for _, tt := range []struct {
		op     string
		want   uint64
		signed bool
	}{
		{"-8@counter(%rip)", uint64(1<<64 - 41), true},
		{"8@$counter", counter + bias, false},
		{"-4@112(%rsp)", uint64(1<<64 - 2), true},
		{"4@112(%rsp)", 0xfffffffe, false},
		{"-1@%al", uint64(1<<64 - 128), true},
		{"1@%al", 0x80, false},
		{"-2@%ax", uint64(1<<64 - 384), true},
		{"1@%dh", 0x12, false},
		{"-1@$-3", uint64(1<<64 - 3), true},
	} {
		e, err := ctx.parseOperand(tt.op)
		if err != nil {
			t.Fatal(err)
		}
		v, err := probe.Eval(e, env)
		if err != nil || v.Int != tt.want || v.Signed != tt.signed {
			t.Errorf("%s = %#x signed %v (%v), want %#x signed %v", tt.op, v.Int, v.Signed, err, tt.want, tt.signed)
		}
	}
}
