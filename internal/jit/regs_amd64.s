//go:build linux && amd64

#include "textflag.h"

// func callRegs(code uintptr, r *Regs)
//
// Runs code with every general register but RSP, and the flags, from r,
// on a stack inside this function's own frame (the code may write up to
// about 7 KiB below its stack pointer), then stores every register and the
// flags as the code left them into r.Out. Regs layout: In [16]uint64
// (hardware order), InFlags, Out [16]uint64, OutFlags.
TEXT ·callRegs(SB), 0, $8192-16
	MOVQ code+0(FP), AX
	MOVQ r+8(FP), DI
	LEAQ 8000(SP), R8
	MOVQ SP, 0(R8)
	MOVQ DI, 8(R8)
	MOVQ AX, 16(R8)
	MOVQ R8, SP
	MOVQ SP, 32(DI)
	PUSHQ 128(DI)
	POPFQ
	MOVQ 0(DI), AX
	MOVQ 8(DI), CX
	MOVQ 16(DI), DX
	MOVQ 24(DI), BX
	MOVQ 40(DI), BP
	MOVQ 48(DI), SI
	MOVQ 64(DI), R8
	MOVQ 72(DI), R9
	MOVQ 80(DI), R10
	MOVQ 88(DI), R11
	MOVQ 96(DI), R12
	MOVQ 104(DI), R13
	MOVQ 112(DI), R14
	MOVQ 120(DI), R15
	MOVQ 56(DI), DI
	CALL 16(SP)
	MOVQ DI, -16(SP)
	MOVQ AX, -24(SP)
	PUSHFQ
	POPQ AX
	MOVQ AX, -8(SP)
	MOVQ -24(SP), AX
	MOVQ 8(SP), DI
	MOVQ AX, 136(DI)
	MOVQ CX, 144(DI)
	MOVQ DX, 152(DI)
	MOVQ BX, 160(DI)
	MOVQ SP, 168(DI)
	MOVQ BP, 176(DI)
	MOVQ SI, 184(DI)
	MOVQ -16(SP), AX
	MOVQ AX, 192(DI)
	MOVQ R8, 200(DI)
	MOVQ R9, 208(DI)
	MOVQ R10, 216(DI)
	MOVQ R11, 224(DI)
	MOVQ R12, 232(DI)
	MOVQ R13, 240(DI)
	MOVQ R14, 248(DI)
	MOVQ R15, 256(DI)
	MOVQ -8(SP), AX
	MOVQ AX, 264(DI)
	MOVQ 0(SP), R8
	MOVQ R8, SP
	RET
