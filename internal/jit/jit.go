//go:build linux && amd64

// Package jit runs generated machine code inside the test process, for
// tests of native code generators.
package jit

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// Func is code in an executable mapping of its own.
type Func struct{ mem []byte }

// New maps code read-only and executable. The code is called with RBX
// pointing to the frame and must return with RET, preserving RBX, RBP,
// RSP and R12–R15.
func New(code []byte) (*Func, error) {
	mem, err := unix.Mmap(-1, 0, max(len(code), 1), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return nil, err
	}
	copy(mem, code)
	// Write, then execute: never both, which hardened kernels refuse.
	if err := unix.Mprotect(mem, unix.PROT_READ|unix.PROT_EXEC); err != nil {
		unix.Munmap(mem)
		return nil, err
	}
	return &Func{mem: mem}, nil
}

// Call runs f with RBX = &frame[0] and returns RAX, and whether f kept
// RBX, RBP, R12, R13 and R15 (R14 the trampoline cannot check).
func (f *Func) Call(frame []uint64) (rax uint64, saved bool) {
	return call(uintptr(unsafe.Pointer(&f.mem[0])), &frame[0])
}

// Close unmaps the code.
func (f *Func) Close() error { return unix.Munmap(f.mem) }

// call is in call_amd64.s.
//
//go:noescape
func call(code uintptr, frame *uint64) (rax uint64, saved bool)

// Regs are the general registers (hardware order: rax rcx rdx rbx rsp rbp
// rsi rdi r8..r15) and flags before and after CallRegs.
type Regs struct {
	In       [16]uint64
	InFlags  uint64
	Out      [16]uint64
	OutFlags uint64
}

// CallRegs runs f with every general register but rsp, and the flags,
// taken from r.In and r.InFlags, on a stack of its own with about 7 KiB
// free below it, and stores what f left in r.Out and r.OutFlags. In[4]
// is set to the stack pointer f was called with (its return address
// popped), to compare with Out[4]. f returns with RET.
func (f *Func) CallRegs(r *Regs) { callRegs(uintptr(unsafe.Pointer(&f.mem[0])), r) }

// callRegs is in regs_amd64.s.
//
//go:noescape
func callRegs(code uintptr, r *Regs)
