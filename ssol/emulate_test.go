//go:build linux && amd64

package ssol

import (
	"bytes"
	"errors"
	"testing"

	"golang.org/x/sys/unix"
)

const (
	stackTop = 0x7ffe0000
	fZF      = flagZF
)

type emuCase struct {
	name string
	code string
	set  map[string]uint64 // registers before (rsp = stackTop by default)
	mem  map[uint64]uint64 // 8-byte words in memory before
	want map[string]uint64 // registers after; "[rsp]" is the word at the new rsp
}

func TestEmulate(t *testing.T) {
	const a = codeAddr
	for _, c := range []emuCase{
		{name: "nop", code: "90", want: map[string]uint64{"rip": a + 1}},
		{name: "nopw", code: "66 90", want: map[string]uint64{"rip": a + 2}},
		{name: "nopl", code: "0f 1f 44 00 00", want: map[string]uint64{"rip": a + 5}},
		{name: "cs nopw", code: "66 2e 0f 1f 84 00 00 00 00 00", want: map[string]uint64{"rip": a + 10}},
		{name: "nopl [rip]", code: "0f 1f 05 00 00 00 00", want: map[string]uint64{"rip": a + 7}},
		{name: "endbr64", code: "f3 0f 1e fa", want: map[string]uint64{"rip": a + 4}},
		{name: "endbr32", code: "f3 0f 1e fb", want: map[string]uint64{"rip": a + 4}},
		{name: "jmp rel8", code: "eb 10", want: map[string]uint64{"rip": a + 2 + 0x10}},
		{name: "jmp rel8 back", code: "eb fe", want: map[string]uint64{"rip": a}},
		{name: "jmp rel32", code: "e9 00 01 00 00", want: map[string]uint64{"rip": a + 5 + 0x100}},
		{name: "bnd jmp rel32", code: "f2 e9 00 01 00 00", want: map[string]uint64{"rip": a + 6 + 0x100}},
		{name: "je taken", code: "74 10", set: map[string]uint64{"eflags": fZF}, want: map[string]uint64{"rip": a + 0x12}},
		{name: "je not taken", code: "74 10", want: map[string]uint64{"rip": a + 2}},
		{name: "jne rel32 taken", code: "0f 85 f0 ff ff ff", want: map[string]uint64{"rip": a + 6 - 0x10}},
		{name: "jl near taken", code: "0f 8c 00 01 00 00", set: map[string]uint64{"eflags": flagSF}, want: map[string]uint64{"rip": a + 6 + 0x100}},
		{name: "jl near not taken", code: "0f 8c 00 01 00 00", set: map[string]uint64{"eflags": flagSF | flagOF}, want: map[string]uint64{"rip": a + 6}},
		{name: "call rel32", code: "e8 10 00 00 00", want: map[string]uint64{"rip": a + 5 + 0x10, "rsp": stackTop - 8, "[rsp]": a + 5}},
		{name: "call [rip]", code: "ff 15 10 00 00 00", mem: map[uint64]uint64{a + 6 + 0x10: 0x123456},
			want: map[string]uint64{"rip": 0x123456, "rsp": stackTop - 8, "[rsp]": a + 6}},
		{name: "jmp [rip]", code: "ff 25 10 00 00 00", mem: map[uint64]uint64{a + 6 + 0x10: 0x654321},
			want: map[string]uint64{"rip": 0x654321, "rsp": stackTop}},
		{name: "notrack jmp [rip]", code: "3e ff 25 f0 ff ff ff", mem: map[uint64]uint64{a + 7 - 0x10: 0x777},
			want: map[string]uint64{"rip": 0x777}},
		{name: "call rax", code: "ff d0", set: map[string]uint64{"rax": 0x5555},
			want: map[string]uint64{"rip": 0x5555, "rsp": stackTop - 8, "[rsp]": a + 2}},
		{name: "notrack call rdx", code: "3e ff d2", set: map[string]uint64{"rdx": 0x5556},
			want: map[string]uint64{"rip": 0x5556, "rsp": stackTop - 8, "[rsp]": a + 3}},
		{name: "jmp r11", code: "41 ff e3", set: map[string]uint64{"r11": 0x5557}, want: map[string]uint64{"rip": 0x5557, "rsp": stackTop}},
		{name: "call [rax+8]", code: "ff 50 08", set: map[string]uint64{"rax": 0x5000}, mem: map[uint64]uint64{0x5008: 0xabc},
			want: map[string]uint64{"rip": 0xabc, "rsp": stackTop - 8, "[rsp]": a + 3}},
		{name: "jmp [rax+rbx*8+0x10]", code: "ff 64 d8 10", set: map[string]uint64{"rax": 0x6000, "rbx": 3},
			mem: map[uint64]uint64{0x6000 + 24 + 0x10: 0xdef}, want: map[string]uint64{"rip": 0xdef}},
		{name: "jmp [r12*8+disp32]", code: "42 ff 24 e5 00 10 00 00", set: map[string]uint64{"r12": 2},
			mem: map[uint64]uint64{0x1010: 0xfed}, want: map[string]uint64{"rip": 0xfed}},
		{name: "call [rsp+8]", code: "ff 54 24 08", mem: map[uint64]uint64{stackTop + 8: 0x999},
			want: map[string]uint64{"rip": 0x999, "rsp": stackTop - 8, "[rsp]": a + 4}},
		{name: "call fs:[0x10]", code: "64 ff 14 25 10 00 00 00", set: map[string]uint64{"fs_base": 0x7000},
			mem: map[uint64]uint64{0x7010: 0x888}, want: map[string]uint64{"rip": 0x888, "[rsp]": a + 8}},
		{name: "jmp [eax] addr32", code: "67 ff 20", set: map[string]uint64{"rax": 0xffff_0000_0000_8000},
			mem: map[uint64]uint64{0x8000: 0x4321}, want: map[string]uint64{"rip": 0x4321}},
		{name: "ret", code: "c3", mem: map[uint64]uint64{stackTop: 0x4444}, want: map[string]uint64{"rip": 0x4444, "rsp": stackTop + 8}},
		{name: "rep ret", code: "f3 c3", mem: map[uint64]uint64{stackTop: 0x4445}, want: map[string]uint64{"rip": 0x4445, "rsp": stackTop + 8}},
		{name: "bnd ret", code: "f2 c3", mem: map[uint64]uint64{stackTop: 0x4446}, want: map[string]uint64{"rip": 0x4446, "rsp": stackTop + 8}},
		{name: "ret imm16", code: "c2 10 00", mem: map[uint64]uint64{stackTop: 0x4447}, want: map[string]uint64{"rip": 0x4447, "rsp": stackTop + 8 + 16}},
		{name: "push rbp", code: "55", set: map[string]uint64{"rbp": 0xb0b}, want: map[string]uint64{"rip": a + 1, "rsp": stackTop - 8, "[rsp]": 0xb0b}},
		{name: "push r12", code: "41 54", set: map[string]uint64{"r12": 0xc0c}, want: map[string]uint64{"rip": a + 2, "rsp": stackTop - 8, "[rsp]": 0xc0c}},
		{name: "push rsp", code: "54", want: map[string]uint64{"rsp": stackTop - 8, "[rsp]": stackTop}},
		{name: "loop taken", code: "e2 f0", set: map[string]uint64{"rcx": 2}, want: map[string]uint64{"rip": a + 2 - 0x10, "rcx": 1}},
		{name: "loop done", code: "e2 f0", set: map[string]uint64{"rcx": 1}, want: map[string]uint64{"rip": a + 2, "rcx": 0}},
		{name: "loop wraps", code: "e2 f0", set: map[string]uint64{"rcx": 0}, want: map[string]uint64{"rip": a - 0xe, "rcx": ^uint64(0)}},
		{name: "loop ecx", code: "67 e2 f0", set: map[string]uint64{"rcx": 0x1_0000_0001}, want: map[string]uint64{"rip": a + 3, "rcx": 0}},
		{name: "loope taken", code: "e1 10", set: map[string]uint64{"rcx": 5, "eflags": fZF}, want: map[string]uint64{"rip": a + 0x12, "rcx": 4}},
		{name: "loope not taken", code: "e1 10", set: map[string]uint64{"rcx": 5}, want: map[string]uint64{"rip": a + 2, "rcx": 4}},
		{name: "loopne taken", code: "e0 10", set: map[string]uint64{"rcx": 5}, want: map[string]uint64{"rip": a + 0x12, "rcx": 4}},
		{name: "loopne not taken", code: "e0 10", set: map[string]uint64{"rcx": 5, "eflags": fZF}, want: map[string]uint64{"rip": a + 2, "rcx": 4}},
		{name: "jrcxz taken", code: "e3 10", want: map[string]uint64{"rip": a + 0x12}},
		{name: "jrcxz not taken", code: "e3 10", set: map[string]uint64{"rcx": 0x1_0000_0000}, want: map[string]uint64{"rip": a + 2}},
		{name: "jecxz taken", code: "67 e3 10", set: map[string]uint64{"rcx": 0x1_0000_0000}, want: map[string]uint64{"rip": a + 0x13, "rcx": 0x1_0000_0000}},
	} {
		t.Run(c.name, func(t *testing.T) {
			in, err := Analyze(hexBytes(t, c.code), a)
			if err != nil {
				t.Fatal(err)
			}
			if in.Action != Emulate {
				t.Fatalf("%s: action %d, want Emulate", in.Text, in.Action)
			}
			var regs unix.PtraceRegs
			regs.Rip, regs.Rsp = a+1, stackTop // as at the breakpoint stop
			for k, v := range c.set {
				*regByName(&regs, k) = v
			}
			m := newMem(stackTop-64, stackTop+64)
			for addr, v := range c.mem {
				m.put64(addr, v)
			}
			if err := in.Emulate(&regs, m); err != nil {
				t.Fatal(err)
			}
			for k, want := range c.want {
				var got uint64
				if k == "[rsp]" {
					got = m.get64(t, regs.Rsp)
				} else {
					got = *regByName(&regs, k)
				}
				if got != want {
					t.Errorf("%s: %s = %#x, want %#x", in.Text, k, got, want)
				}
			}
		})
	}
}

// TestEmulateFault checks that a failed access reports an error and leaves
// the registers alone, so the engine can deliver SIGSEGV.
// The error says which access failed, and Touch points the registers at
// the one instruction that makes it again (push, pop, or a load at rax).
func TestEmulateFault(t *testing.T) {
	for _, c := range []struct {
		code   string
		access Access
		addr   uint64
		touch  string
	}{
		{"c3", AccessPop, 0x10, "58"},
		{"e8 00 00 00 00", AccessPush, 0x8, "50"},
		{"55", AccessPush, 0x8, "50"},
		{"ff 50 08", AccessLoad, 0x28, "48 8b 00"},
		{"ff 15 00 00 00 00", AccessLoad, codeAddr + 6, "48 8b 00"},
	} {
		in, err := Analyze(hexBytes(t, c.code), codeAddr)
		if err != nil {
			t.Fatal(err)
		}
		var regs unix.PtraceRegs
		regs.Rip, regs.Rsp, regs.Rax = codeAddr+1, 0x10, 0x20
		before := regs
		err = in.Emulate(&regs, newMem(0x1000, 0x2000))
		if !errors.Is(err, errFault) {
			t.Errorf("%s: err %v, want a fault", in.Text, err)
		}
		if regs != before {
			t.Errorf("%s: registers changed on a fault", in.Text)
		}
		var fe *FaultError
		if !errors.As(err, &fe) || fe.Access != c.access || fe.Addr != c.addr {
			t.Errorf("%s: %#v, want access %d at %#x", in.Text, fe, c.access, c.addr)
			continue
		}
		if !in.Accesses() {
			t.Errorf("%s: Accesses false", in.Text)
		}
		const at = 0x5000
		end := fe.Touch(&regs, at)
		code := TouchCode()[regs.Rip-at : end-at]
		if want := append(hexBytes(t, c.touch), 0xcc); !bytes.Equal(code, want) || regs.Rsp != before.Rsp ||
			(c.access == AccessLoad) != (regs.Rax == c.addr) {
			t.Errorf("%s: touch % x, rsp %#x, rax %#x; want % x", in.Text, code, regs.Rsp, regs.Rax, want)
		}
	}
}

// TestConditions checks all 16 jcc conditions against their definitions.
func TestConditions(t *testing.T) {
	for fl := uint64(0); fl < 32; fl++ {
		cf, pf, zf, sf, of := fl&1 != 0, fl&2 != 0, fl&4 != 0, fl&8 != 0, fl&16 != 0
		var eflags uint64
		for i, f := range []uint64{flagCF, flagPF, flagZF, flagSF, flagOF} {
			if fl&(1<<i) != 0 {
				eflags |= f
			}
		}
		want := [16]bool{of, !of, cf, !cf, zf, !zf, cf || zf, !cf && !zf,
			sf, !sf, pf, !pf, sf != of, sf == of, zf || sf != of, !zf && sf == of}
		for cc := range 16 {
			in, err := Analyze([]byte{0x70 | byte(cc), 0x10}, codeAddr)
			if err != nil {
				t.Fatal(err)
			}
			regs := unix.PtraceRegs{Eflags: eflags | 0x202}
			if err := in.Emulate(&regs, nil); err != nil {
				t.Fatal(err)
			}
			if taken := regs.Rip == codeAddr+0x12; taken != want[cc] {
				t.Errorf("%s with CF%v PF%v ZF%v SF%v OF%v: taken %v", in.Text, cf, pf, zf, sf, of, taken)
			}
		}
	}
}

func BenchmarkEmulate(b *testing.B) {
	for _, c := range []struct{ name, code string }{
		{"jcc", "0f 85 f0 ff ff ff"}, {"call", "e8 10 00 00 00"}, {"push", "55"}, {"ret", "c3"}, {"jmp [rip]", "ff 25 10 00 00 00"},
	} {
		in, err := Analyze(hexBytes(b, c.code), codeAddr)
		if err != nil {
			b.Fatal(err)
		}
		m := newMem(stackTop-64, stackTop+64)
		m.put64(stackTop, 0x4444)
		m.put64(codeAddr+6+0x10, 0x5555)
		b.Run(c.name, func(b *testing.B) {
			var regs unix.PtraceRegs
			for b.Loop() {
				regs.Rip, regs.Rsp = codeAddr+1, stackTop
				if err := in.Emulate(&regs, m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
