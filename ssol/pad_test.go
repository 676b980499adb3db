//go:build linux && amd64

package ssol

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/utap/utap/internal/x86"
	"golang.org/x/arch/x86/x86asm"
)

const (
	highFn = 0x7f12_3456_0000 // a function whose return addresses need 64 bits
	nearAt = codeAddr + 1<<20 // a pad 1 MiB past the code
)

// TestPlanPad runs PlanPad and Code on hand-written functions; accepted
// sites are checked by decoding their pad code (checkCode).
func TestPlanPad(t *testing.T) {
	for _, c := range []struct {
		name, fn string
		fnAddr   uint64
		site     int    // offset in fn
		busy     int    // offset reported busy, 0: none
		wantLen  int    // 0: refused
		wantErr  string // part of the refusal
	}{
		{"endbr64; push rbp", "f3 0f 1e fa 55 48 89 e5 c3", codeAddr, 0, 0, 5, ""},
		{"push rbp; mov rbp,rsp; sub rsp,16", "55 48 89 e5 48 83 ec 10 c3", codeAddr, 0, 0, 8, ""},
		{"mov rax,[rip+0x100]", "48 8b 05 00 01 00 00 c3", codeAddr, 0, 0, 7, ""},
		{"vmovdqu ymm0,[rip] (VEX)", "c5 fe 6f 05 10 00 00 00 c3", codeAddr, 0, 0, 8, ""},
		{"push rbp; call rel32", "55 e8 10 00 00 00 5d c3", codeAddr, 0, 0, 6, ""},
		{"push rbp; call rel32, 64-bit return", "55 e8 10 00 00 00 5d c3", highFn, 0, 0, 6, ""},
		{"mov rax,rdi; jmp rel8", "48 89 f8 eb 10 90 c3", codeAddr, 0, 0, 5, ""},
		{"jmp rel32 backwards", "e9 00 f0 ff ff 90", highFn, 0, 0, 5, ""},
		{"nopl [rax]; push rbx", "0f 1f 40 00 53 c3", codeAddr, 0, 0, 5, ""},
		{"mid-function site", "55 48 89 e5 48 83 ec 10 c3", codeAddr, 1, 0, 7, ""},
		{"busy site itself is fine", "f3 0f 1e fa 55 c3", codeAddr, 0, 0, 5, ""},
		{"loop to site", "55 48 89 e5 48 ff c9 75 f7 c3", codeAddr, 0, 0, 7, ""},
		{"loop to site+Len", "55 48 89 e5 48 ff c9 75 fe c3", codeAddr, 0, 0, 7, ""},
		{"loop to site+1", "55 48 89 e5 48 ff c9 75 f8 c3", codeAddr, 0, 0, 0, "lands inside"},
		{"loop to site+4", "55 48 89 e5 48 ff c9 75 fb c3", codeAddr, 0, 0, 0, "lands inside"},
		{"jmp into the range", "55 48 89 e5 90 c3 eb f9", codeAddr, 0, 0, 0, "lands inside"},
		{"jmp rel8 last to site+1", "55 48 89 f8 eb fb c3", codeAddr, 0, 0, 0, "lands inside"},
		{"jcc in range", "85 ff 74 10 90 90 90 c3", codeAddr, 0, 0, 5, ""},
		{"jcc last", "48 85 ff 74 10 90 c3", codeAddr, 0, 0, 5, ""},
		{"jcc rel32 backwards", "48 85 ff 0f 84 00 f0 ff ff c3", highFn, 0, 0, 9, ""},
		{"jcc to site", "48 85 ff 74 fb c3", codeAddr, 0, 0, 5, ""},
		{"jcc into the range", "48 85 ff 74 fc c3", codeAddr, 0, 0, 0, "lands inside"},
		{"two jccs", "85 ff 74 10 78 0e c3", codeAddr, 0, 0, 6, ""},
		{"loop in range", "90 90 90 e2 fe c3", codeAddr, 0, 0, 0, "conditional"},
		{"jmp before the end", "eb 03 90 90 90 c3", codeAddr, 0, 0, 0, "before the end"},
		{"ret before the end", "5d c3 90 90 55 c3", codeAddr, 0, 0, 0, "ret before"},
		{"ret, then padding", "5d c3 90 90 90 90", codeAddr, 0, 0, 5, ""},
		{"a lone ret and its alignment", "c3 66 66 2e 0f 1f 84 00 00 00 00 00 0f 1f 40 00", codeAddr, 0, 0, 5, ""},
		{"a lone ret, int3s", "c3 cc cc cc cc cc cc cc", codeAddr, 0, 0, 5, ""},
		{"a lone ret, too little padding", "c3 90 90", codeAddr, 0, 0, 0, "ret before"},
		{"a lone ret, padding jumped to", "c3 90 90 90 90 90 eb f9", codeAddr, 0, 0, 0, "ret before"},
		{"lea; ret: ret last", "48 8d 04 37 c3 90", codeAddr, 0, 0, 5, ""},
		{"indirect call", "55 ff d0 5d c3", codeAddr, 0, 0, 0, "indirect"},
		{"PLT stub: jmp [rip] last", "ff 25 ca 2f 00 00 68 00 00 00 00 e9 e0 ff ff ff", codeAddr, 0, 0, 6, ""},
		{"PLT.sec: endbr; bnd jmp [rip] last", "f3 0f 1e fa f2 ff 25 ca 2f 00 00 0f 1f 44 00 00", codeAddr, 0, 0, 11, ""},
		{"mov rax,rdi; jmp rax last", "48 89 f8 ff e0 c3", codeAddr, 0, 0, 5, ""},
		{"indirect jmp before the end", "ff e0 90 90 90 c3", codeAddr, 0, 0, 0, "indirect"},
		{"syscall in range", "31 c0 0f 05 c3", codeAddr, 0, 0, 0, "syscall"},
		{"int3 in range", "55 cc 48 89 e5 c3", codeAddr, 0, 0, 0, "int3"},
		{"cpuid in range", "31 c0 0f a2 c3", codeAddr, 0, 0, 0, "may trap"},
		{"lock on a register", "f0 48 01 c0 90 c3", codeAddr, 0, 0, 0, "cannot be locked"},
		{"lock on memory", "f0 48 01 07 90 c3", codeAddr, 0, 0, 5, ""},
		{"busy address", "f3 0f 1e fa 55 48 89 e5 c3", codeAddr, 0, 4, 0, "busy"},
		{"past the function's end", "55 48 89 e5", codeAddr, 0, 0, 0, "ends"},
		{"instruction cut by the end", "55 48 89 e5 48 83", codeAddr, 0, 0, 0, "refused"},
		{"empty function", "", codeAddr, 0, 0, 0, "size unknown"},
		{"site off a boundary", "55 48 89 e5 48 83 ec 10 90 c3", codeAddr, 2, 0, 0, "boundary"},
		{"indirect jmp, site inside", "55 48 89 e5 48 83 ec 10 ff e0 c3", codeAddr, 1, 0, 0, "indirect jmp"},
		{"indirect jmp, site at entry", "55 48 89 e5 48 83 ec 10 ff e0 c3", codeAddr, 0, 0, 8, ""},
		{"undecodable, site inside", "55 48 89 e5 48 83 ec 10 c3 d5", codeAddr, 1, 0, 0, "cannot decode"},
		{"undecodable, site at entry", "55 48 89 e5 48 83 ec 10 c3 d5", codeAddr, 0, 0, 8, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			fn := hexBytes(t, c.fn)
			site := c.fnAddr + uint64(c.site)
			busy := func(a uint64) bool { return c.busy != 0 && a == c.fnAddr+uint64(c.busy) || a == site }
			d, err := PlanPad(fn, c.fnAddr, site, busy)
			if c.wantLen == 0 {
				if !errors.Is(err, ErrNoPad) || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("got %v, want a refusal saying %q", err, c.wantErr)
				}
				t.Log(err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d.Addr != site || d.Len != c.wantLen {
				t.Fatalf("Addr %#x Len %d, want %#x %d", d.Addr, d.Len, site, c.wantLen)
			}
			for _, at := range []uint64{c.fnAddr + 1<<20, c.fnAddr + 3<<30} {
				code, err := d.Code(at)
				if err != nil && at > c.fnAddr+1<<20 && strings.Contains(c.name, "rip") {
					continue // the operand is out of reach: refused, as checked in TestPadRipRelative
				}
				if err != nil {
					t.Fatal(err)
				}
				checkCode(t, d, at, code)
				t.Logf("at %#x: % x", at, code)
			}
		})
	}
}

// TestPadJmpInd: a PLT stub's jmp [rip+disp32], displaced, reads the
// same GOT slot from the pad; beyond ±2 GiB the site keeps its int3.
func TestPadJmpInd(t *testing.T) {
	d, err := PlanPad(hexBytes(t, "f3 0f 1e fa f2 ff 25 ca 2f 00 00 0f 1f 44 00 00"), codeAddr, codeAddr, nil)
	if err != nil {
		t.Fatal(err)
	}
	code, err := d.Code(nearAt)
	if err != nil {
		t.Fatal(err)
	}
	slot := uint64(codeAddr + 11 + 0x2fca)
	want := cat(hexBytes(t, "f3 0f 1e fa f2 ff 25"), le32(int64(slot-(nearAt+11))))
	if !bytes.Equal(code, want) {
		t.Fatalf("code % x, want % x (nothing after the jmp)", code, want)
	}
	if _, err := d.Code(codeAddr + 3<<30); !errors.Is(err, ErrNoPad) {
		t.Fatalf("out of reach: %v, want %v", err, ErrNoPad)
	}
}

// TestPadRipRelative spells out one relocation and the out-of-reach error.
func TestPadRipRelative(t *testing.T) {
	d, err := PlanPad(hexBytes(t, "48 8b 05 00 01 00 00 c3"), codeAddr, codeAddr, nil)
	if err != nil {
		t.Fatal(err)
	}
	code, err := d.Code(nearAt)
	if err != nil {
		t.Fatal(err)
	}
	target := uint64(codeAddr + 7 + 0x100)
	want := cat(hexBytes(t, "48 8b 05"), le32(int64(target-(nearAt+7))), []byte{0xe9}, le32(int64(codeAddr+7-(nearAt+12))))
	if !bytes.Equal(code, want) {
		t.Fatalf("code % x, want % x", code, want)
	}
	inst, err := x86asm.Decode(code, 64)
	if m, ok := inst.Args[1].(x86asm.Mem); err != nil || !ok || m.Base != x86asm.RIP || nearAt+7+uint64(int32(m.Disp)) != target {
		t.Fatalf("x86asm: %v %v", inst, err)
	}
	if _, err := d.Code(codeAddr + 3<<30); !errors.Is(err, ErrNoPad) {
		t.Fatalf("Code beyond 2 GiB: %v, want ErrNoPad", err)
	}
}

func TestPadJump(t *testing.T) {
	d, err := PlanPad(hexBytes(t, "55 48 89 e5 48 83 ec 10 c3"), codeAddr, codeAddr, nil)
	if err != nil {
		t.Fatal(err)
	}
	j, err := d.Jump(nearAt)
	if err != nil {
		t.Fatal(err)
	}
	off := 0
	if len(j) != JumpLen || checkJump(t, j, &off, codeAddr) != nearAt {
		t.Fatalf("Jump(%#x) = % x", uint64(nearAt), j)
	}
	if _, err := d.Jump(codeAddr + 1<<31 + 5); !errors.Is(err, ErrNoPad) {
		t.Fatalf("Jump beyond 2 GiB: %v", err)
	}
}

// checkCode decodes code, d relocated to at, one instruction at a time and
// checks it is d's instructions (RIP-relative targets kept), then the jump
// back or the last jmp/call redone.
func checkCode(t *testing.T, d *Displaced, at uint64, code []byte) {
	t.Helper()
	if len(code) > MaxCodeLen {
		t.Errorf("%#x: %d bytes of code", d.Addr, len(code))
	}
	off := 0
	back := d.Addr + uint64(d.Len)
	for _, in := range d.Insns {
		e := &in.an.emu
		if in.Action == Emulate && e.kind == emRet {
			// Copied, and nothing after it: it leaves.
			if !bytes.Equal(code[off:], in.Bytes) {
				t.Errorf("%#x: % x after the copies, want % x", d.Addr, code[off:], in.Bytes)
			}
			return
		}
		if in.Action == Emulate && e.kind == emJmpInd {
			// Last, nothing after it: the same jmp, reading the same slot.
			b := code[off:]
			inst, err := x86.Decode(in.Bytes)
			m, rip := inst.Args[0].(x86asm.Mem)
			rip = err == nil && rip && m.Base == x86asm.RIP
			switch {
			case len(b) != len(in.Bytes):
				t.Errorf("%#x: % x after the copies, want % x", d.Addr, b, in.Bytes)
			case !rip && !bytes.Equal(b, in.Bytes):
				t.Errorf("%#x: % x, want % x", d.Addr, b, in.Bytes)
			case rip && ripTarget(t, b, at+uint64(off)) != ripTarget(t, in.Bytes, in.Addr):
				t.Errorf("%#x: % x reads %#x, want %#x", d.Addr, b, ripTarget(t, b, at+uint64(off)), ripTarget(t, in.Bytes, in.Addr))
			}
			return
		}
		if in.Action == Emulate && e.kind == emJmp {
			back = e.target
			break
		}
		if in.IsJcc() {
			// To the same target: jcc rel32, or the opposite condition
			// over an absolute jmp.
			inst, err := x86asm.Decode(code[off:], 64)
			rel, ok := inst.Args[0].(x86asm.Rel)
			if err != nil || !ok {
				t.Fatalf("%#x: % x at +%d: %v %v, want a jcc", d.Addr, code, off, inst, err)
			}
			pc := at + uint64(off)
			off += inst.Len
			if inst.Len == 6 {
				if got := pc + 6 + uint64(int64(rel)); got != e.target {
					t.Errorf("%#x: %v goes to %#x, want %#x", d.Addr, inst, got, e.target)
				}
				continue
			}
			if inst.Len != 2 || int(rel) != jccFar-2 || code[off-2] != 0x70|(e.cc^1) {
				t.Fatalf("%#x: % x at +%d: %v, want the opposite jcc over %d bytes", d.Addr, code, off-inst.Len, inst, jccFar-2)
			}
			if got := checkJump(t, code, &off, at); got != e.target {
				t.Errorf("%#x: far jcc goes to %#x, want %#x", d.Addr, got, e.target)
			}
			continue
		}
		if in.Action == Emulate && e.kind == emCall {
			if v := checkPush(t, code, &off); v != e.next {
				t.Errorf("%#x: pushed %#x, want %#x", d.Addr, v, e.next)
			}
			back = e.target
			break
		}
		pc := at + uint64(off)
		inst, err := x86.Decode(code[off:])
		if err != nil || inst.Len != len(in.Bytes) {
			t.Fatalf("%#x: % x at +%d: %v, length %d, want %s", d.Addr, code, off, err, inst.Len, in.Text)
		}
		b := code[off : off+inst.Len]
		off += inst.Len
		if in.an.dispOff < 0 {
			if !bytes.Equal(b, in.Bytes) {
				t.Errorf("%#x: % x, want % x", d.Addr, b, in.Bytes)
			}
			continue
		}
		o := in.an.dispOff
		if !bytes.Equal(b[:o], in.Bytes[:o]) || !bytes.Equal(b[o+4:], in.Bytes[o+4:]) {
			t.Errorf("%#x: % x, want % x but the disp32", d.Addr, b, in.Bytes)
		}
		if got, want := ripTarget(t, b, pc), ripTarget(t, in.Bytes, in.Addr); got != want {
			t.Errorf("%#x %s: relocated to %#x, the operand moved from %#x to %#x", d.Addr, in.Text, pc, want, got)
		}
	}
	if got := checkJump(t, code, &off, at); got != back {
		t.Errorf("%#x: code % x leaves for %#x, want %#x", d.Addr, code, got, back)
	}
	if off != len(code) {
		t.Errorf("%#x: % x: %d bytes after the jump", d.Addr, code, len(code)-off)
	}
}

// ripTarget is the address of code's RIP-relative operand, by our locator
// and, where it sees the operand, by x86asm.
func ripTarget(t *testing.T, code []byte, pc uint64) uint64 {
	t.Helper()
	l, err := x86.Locate(code)
	if err != nil || !l.RipRel(code) {
		t.Fatalf("% x: not RIP-relative (%v)", code, err)
	}
	next := pc + uint64(len(code))
	a := next + uint64(int64(int32(binary.LittleEndian.Uint32(code[l.ModRM+1:]))))
	if inst, err := x86asm.Decode(code, 64); err == nil && !l.P67 {
		for _, arg := range inst.Args {
			// x86asm zero-extends disp32.
			if m, ok := arg.(x86asm.Mem); ok && m.Base == x86asm.RIP && next+uint64(int32(m.Disp)) != a {
				t.Errorf("% x at %#x: x86asm's operand %#x, ours %#x", code, pc, next+uint64(int32(m.Disp)), a)
			}
		}
	}
	return a
}

// checkJump decodes the jump at code[*off:] (code starting at at) and
// returns its target.
func checkJump(t *testing.T, code []byte, off *int, at uint64) uint64 {
	t.Helper()
	inst, err := x86asm.Decode(code[*off:], 64)
	if err != nil || inst.Op != x86asm.JMP {
		t.Fatalf("% x at +%d: %v %v, want a jmp", code, *off, inst, err)
	}
	next := at + uint64(*off+inst.Len)
	*off += inst.Len
	switch a := inst.Args[0].(type) {
	case x86asm.Rel:
		return next + uint64(int64(a))
	case x86asm.Mem:
		if a.Base == x86asm.RIP && a.Disp == 0 && *off+8 <= len(code) {
			*off += 8
			return binary.LittleEndian.Uint64(code[*off-8:])
		}
	}
	t.Fatalf("% x: unexpected jump %v", code, inst)
	return 0
}

// checkPush decodes push imm32 [movl $hi,4(%rsp)] and returns the value.
func checkPush(t *testing.T, code []byte, off *int) uint64 {
	t.Helper()
	inst, err := x86asm.Decode(code[*off:], 64)
	imm, ok := inst.Args[0].(x86asm.Imm)
	if err != nil || inst.Op != x86asm.PUSH || !ok || inst.Len != 5 {
		t.Fatalf("% x at +%d: %v %v, want push imm32", code, *off, inst, err)
	}
	*off += inst.Len
	v := uint64(int64(int32(imm)))
	inst, err = x86asm.Decode(code[*off:], 64)
	if m, ok := inst.Args[0].(x86asm.Mem); err == nil && inst.Op == x86asm.MOV && ok && m.Base == x86asm.RSP && m.Disp == 4 && inst.MemBytes == 4 {
		hi, _ := inst.Args[1].(x86asm.Imm)
		*off += inst.Len
		v = v&0xffffffff | uint64(uint32(hi))<<32
	}
	return v
}

// TestPlanPadAgainElsewhere: a function planned once is planned the same
// at another address (its entry's branch check kept), and a refusal names
// the second copy's own addresses.
func TestPlanPadAgainElsewhere(t *testing.T) {
	// mov %rdi,%rax; test %rdi,%rdi; jne back to the test (+3, inside
	// the jump's six bytes); nop; ret
	bad := []byte{0x48, 0x89, 0xf8, 0x48, 0x85, 0xff, 0x75, 0xfb, 0x90, 0xc3}
	// push %rbp; mov %rsp,%rbp; xor %eax,%eax; pop %rbp; ret
	good := []byte{0x55, 0x48, 0x89, 0xe5, 0x31, 0xc0, 0x5d, 0xc3}
	for _, at := range []uint64{0x401000, 0x7f0000002000} {
		if d, err := PlanPad(good, at, at, nil); err != nil || d.Addr != at || d.Len < JumpLen {
			t.Errorf("at %#x: %+v, %v", at, d, err)
		}
	}
	for _, at := range []uint64{0x401000, 0x7f0000002000} {
		_, err := PlanPad(bad, at, at, nil)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%#x", at+6)) {
			t.Errorf("at %#x: %v, want the branch at %#x", at, err, at+6)
		}
	}
}
