//go:build linux && amd64

package ssol

import "golang.org/x/sys/unix"

// Register numbers as x86 encodes them (ModRM, SIB, REX extensions).
const (
	rax = iota
	rcx
	rdx
	rbx
	rsp
	rbp
	rsi
	rdi
)

// gpr returns a pointer to register n (0–15, encoding order) in regs.
func gpr(regs *unix.PtraceRegs, n int) *uint64 {
	switch n {
	case 0:
		return &regs.Rax
	case 1:
		return &regs.Rcx
	case 2:
		return &regs.Rdx
	case 3:
		return &regs.Rbx
	case 4:
		return &regs.Rsp
	case 5:
		return &regs.Rbp
	case 6:
		return &regs.Rsi
	case 7:
		return &regs.Rdi
	case 8:
		return &regs.R8
	case 9:
		return &regs.R9
	case 10:
		return &regs.R10
	case 11:
		return &regs.R11
	case 12:
		return &regs.R12
	case 13:
		return &regs.R13
	case 14:
		return &regs.R14
	case 15:
		return &regs.R15
	}
	panic("ssol: bad register number")
}

var regNames = [16]string{"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"}

// RFLAGS bits the emulated conditions read.
const (
	flagCF = 1 << 0
	flagPF = 1 << 2
	flagZF = 1 << 6
	flagSF = 1 << 7
	flagOF = 1 << 11
)

// condition evaluates jcc/cmovcc/setcc condition cc (the opcode's low
// nibble) on rflags.
func condition(cc uint8, fl uint64) bool {
	var r bool
	switch cc >> 1 {
	case 0: // o
		r = fl&flagOF != 0
	case 1: // b
		r = fl&flagCF != 0
	case 2: // e
		r = fl&flagZF != 0
	case 3: // be
		r = fl&(flagCF|flagZF) != 0
	case 4: // s
		r = fl&flagSF != 0
	case 5: // p
		r = fl&flagPF != 0
	case 6: // l
		r = (fl&flagSF != 0) != (fl&flagOF != 0)
	case 7: // le
		r = fl&flagZF != 0 || (fl&flagSF != 0) != (fl&flagOF != 0)
	}
	return r != (cc&1 == 1) // odd conditions are the negations
}
