//go:build linux && amd64

package ssol

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

func TestPlanSyscall(t *testing.T) {
	const at = 0x1000
	for _, c := range []struct {
		name string
		code []byte // from `at`, ending with the syscall
		nr   int    // -1: refused
		len  int
	}{
		{"mov eax", []byte{0xb8, 0x6e, 0, 0, 0, 0x0f, 0x05}, 0x6e, 5},
		{"mov rax", []byte{0x48, 0xc7, 0xc0, 0x27, 0, 0, 0, 0x0f, 0x05}, 0x27, 7},
		{"xor eax after a mov", []byte{0x48, 0x89, 0xdf, 0x31, 0xc0, 0x0f, 0x05}, 0, 5},
		// mov $0xe,%eax; movq $0x20,(%rsp): back to the mov.
		{"further back", []byte{0xb8, 0x0e, 0, 0, 0, 0x48, 0xc7, 0x04, 0x24, 0x20, 0, 0, 0, 0x0f, 0x05}, 0xe, 13},
		// mov $0xca,%r8d ... mov %r8d,%eax: a number from a register.
		{"dynamic", []byte{0x41, 0xb8, 0xca, 0, 0, 0, 0x89, 0xca, 0x44, 0x89, 0xc0, 0x0f, 0x05}, -1, 0},
		// mov $1,%eax; mov %edx,%eax: overwritten.
		{"overwritten", []byte{0xb8, 1, 0, 0, 0, 0x89, 0xd0, 0x0f, 0x05}, -1, 0},
		{"too short", []byte{0x31, 0xc0, 0x0f, 0x05}, -1, 0},
		// test %eax,%eax; jne back into the range; syscall.
		{"branch into the range", []byte{0xb8, 1, 0, 0, 0, 0x85, 0xc0, 0x75, 0xf9, 0x0f, 0x05}, -1, 0},
	} {
		sc := uint64(at + len(c.code) - 2)
		d, nr, err := PlanSyscall(c.code, at, sc, nil)
		switch {
		case c.nr < 0 && err == nil:
			t.Errorf("%s: planned (nr %d), want refused", c.name, nr)
		case c.nr < 0 && !errors.Is(err, ErrNoPad):
			t.Errorf("%s: %v, want ErrNoPad", c.name, err)
		case c.nr >= 0 && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.nr >= 0 && (nr != c.nr || d.Len != c.len || d.Addr+uint64(d.Len) != sc):
			t.Errorf("%s: nr %d, %d bytes from %#x; want nr %d, %d bytes ending at %#x", c.name, nr, d.Len, d.Addr, c.nr, c.len, sc)
		case c.nr >= 0:
			code, err := d.Relocated(0x7000)
			if err != nil || !bytes.Equal(code, c.code[len(c.code)-2-c.len:len(c.code)-2]) {
				t.Errorf("%s: relocated % x (%v)", c.name, code, err)
			}
		}
	}
	// Not a syscall instruction's address, and inside another instruction.
	if _, _, err := PlanSyscall([]byte{0xb8, 0x0f, 0x05, 0, 0, 0x0f, 0x05}, at, at+1, nil); !errors.Is(err, ErrNotSyscall) || !errors.Is(err, ErrNoPad) {
		t.Errorf("0f 05 inside a mov: %v, want ErrNotSyscall and ErrNoPad", err)
	}
	// A busy address inside the displaced bytes.
	code := []byte{0xb8, 0x6e, 0, 0, 0, 0x0f, 0x05}
	if _, _, err := PlanSyscall(code, at, at+5, func(a uint64) bool { return a == at+2 }); err == nil {
		t.Error("a busy address inside planned")
	}
}

// TestRelocatedRipRelative: a rip-relative operand keeps its target from
// the pad.
func TestRelocatedRipRelative(t *testing.T) {
	const at, pad = 0x400000, 0x500000
	// mov 0x10(%rip),%rdi; xor %eax,%eax; syscall
	code := []byte{0x48, 0x8b, 0x3d, 0x10, 0, 0, 0, 0x31, 0xc0, 0x0f, 0x05}
	d, nr, err := PlanSyscall(code, at, at+9, nil)
	if err != nil || nr != 0 || d.Len != 9 {
		t.Fatalf("nr %d, %v", nr, err)
	}
	got, err := d.Relocated(pad)
	if err != nil {
		t.Fatal(err)
	}
	disp := int32(uint32(got[3]) | uint32(got[4])<<8 | uint32(got[5])<<16 | uint32(got[6])<<24)
	if target := uint64(int64(pad+7) + int64(disp)); target != at+7+0x10 || !bytes.Equal(got[7:], code[7:9]) {
		t.Errorf("relocated % x: the load reads %#x, want %#x", got, target, at+7+0x10)
	}
}

// TestPlanSyscallJcc: glibc's read, `cmpb $0,single_threaded(%rip); je
// multi; xor %eax,%eax; syscall`: the je goes in the pad as a jcc rel32
// to the same target, or, beyond ±2 GiB, as the opposite jcc over an
// absolute jmp.
func TestPlanSyscallJcc(t *testing.T) {
	const at = 0x400000
	code := []byte{0x80, 0x3d, 0x31, 0x33, 0x0e, 0x00, 0x00, 0x74, 0x17, 0x31, 0xc0, 0x0f, 0x05}
	d, nr, err := PlanSyscall(code, at, at+11, nil)
	if err != nil || nr != 0 || d.Len != 11 || !d.Branches {
		t.Fatalf("nr %d, %+v, %v", nr, d, err)
	}
	const target = at + 9 + 0x17
	near, err := d.Relocated(0x500000)
	if err != nil {
		t.Fatal(err)
	}
	rel := int32(uint32(near[9]) | uint32(near[10])<<8 | uint32(near[11])<<16 | uint32(near[12])<<24)
	if len(near) != 15 || near[7] != 0x0f || near[8] != 0x84 || uint64(int64(0x500000+13)+int64(rel)) != target || !bytes.Equal(near[13:], code[9:11]) {
		t.Errorf("near: % x", near)
	}
	// test %edi,%edi; je +0x10; xor %eax,%eax; syscall, its pad far away.
	code = []byte{0x85, 0xff, 0x74, 0x10, 0x31, 0xc0, 0x0f, 0x05}
	if d, _, err = PlanSyscall(code, at, at+6, nil); err != nil {
		t.Fatal(err)
	}
	far, err := d.Relocated(0x7f0000000000)
	if err != nil {
		t.Fatal(err)
	}
	// test; jne +14; jmp *0(%rip); .quad target; xor
	want := append([]byte{0x85, 0xff, 0x75, 14, 0xff, 0x25, 0, 0, 0, 0}, binary.LittleEndian.AppendUint64(nil, at+4+0x10)...)
	if !bytes.Equal(far, append(want, 0x31, 0xc0)) {
		t.Errorf("far: % x", far)
	}
}

// TestSyscallAt: a `syscall` is one at an instruction boundary, its
// number known when the instructions before it set it, however few.
func TestSyscallAt(t *testing.T) {
	const at = 0x1000
	for _, c := range []struct {
		name  string
		code  []byte // from `at`, ending with the 0f 05
		nr    int    // -1: not static
		notSc bool
	}{
		{"mov eax", []byte{0xb8, 0x6e, 0, 0, 0, 0x0f, 0x05}, 0x6e, false},
		{"xor eax alone", []byte{0x31, 0xc0, 0x0f, 0x05}, 0, false}, // too short for a pad, known
		{"dynamic", []byte{0x44, 0x89, 0xc0, 0x0f, 0x05}, -1, false},
		{"overwritten", []byte{0xb8, 1, 0, 0, 0, 0x89, 0xd0, 0x0f, 0x05}, -1, false},
		{"nothing before", []byte{0x0f, 0x05}, -1, false},
		// mov $0x50f,%eax: the 0f 05 is its immediate.
		{"inside an instruction", []byte{0xb8, 0x0f, 0x05, 0, 0}, 0, true},
	} {
		sc := uint64(at + len(c.code) - 2)
		if c.notSc {
			sc = at + 1
		}
		nr, known, err := SyscallAt(c.code, at, sc)
		switch {
		case c.notSc:
			if !errors.Is(err, ErrNotSyscall) {
				t.Errorf("%s: %v, want ErrNotSyscall", c.name, err)
			}
		case err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.nr < 0 && known, c.nr >= 0 && (!known || nr != c.nr):
			t.Errorf("%s: nr %d known %v, want %d", c.name, nr, known, c.nr)
		}
	}
}
