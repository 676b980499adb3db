//go:build linux && amd64

package uprobe

import "github.com/utap/utap/probe"

// Byte offsets of the x86_64 struct pt_regs fields a probe program reads
// (arch/x86/include/asm/ptrace.h).
const (
	regR9  = 64
	regR8  = 72
	regAX  = 80
	regCX  = 88
	regDX  = 96
	regSI  = 104
	regDI  = 112
	regIP  = 128
	regSP  = 152
	regBX  = 40
	regR10 = 56
	regR11 = 48
	regR15 = 0
	regR14 = 8
	regR13 = 16
	regR12 = 24
	regBP  = 32
)

// namedRegs are the pt_regs offsets of the registers a probe.Reg names
// (USDT operands). At a uprobe hit the kernel has already set ip back to
// the probed instruction (handle_swbp), so rip is the probe's address.
var namedRegs = map[string]int16{
	"rax": regAX, "rbx": regBX, "rcx": regCX, "rdx": regDX,
	"rsi": regSI, "rdi": regDI, "rbp": regBP, "rsp": regSP,
	"r8": regR8, "r9": regR9, "r10": regR10, "r11": regR11,
	"r12": regR12, "r13": regR13, "r14": regR14, "r15": regR15,
	"rip": regIP,
}

// argRegs lists, per ABI, the pt_regs offsets of the integer argument
// registers in order; later arguments are on the stack from sp+8.
var argRegs = map[probe.ABI][]int16{
	probe.ABISysV:   {regDI, regSI, regDX, regCX, regR8, regR9},
	probe.ABIGoRegs: {regAX, regBX, regCX, regDI, regSI, regR8, regR9, regR10, regR11},
}

// retReg holds the integer return value on both ABIs.
const retReg = regAX
