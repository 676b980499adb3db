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
)

// argRegs lists, per ABI, the pt_regs offsets of the integer argument
// registers in order; later arguments are on the stack from sp+8.
var argRegs = map[probe.ABI][]int16{
	probe.ABISysV:   {regDI, regSI, regDX, regCX, regR8, regR9},
	probe.ABIGoRegs: {regAX, regBX, regCX, regDI, regSI, regR8, regR9, regR10, regR11},
}

// retReg holds the integer return value on both ABIs.
const retReg = regAX
