//go:build linux && amd64

#include "textflag.h"

// func call(code uintptr, frame *uint64) (rax uint64, saved bool)
//
// ABI0 lets the code clobber every general register but SP and BP; the ABI
// wrapper restores R14 and X15. Not NOSPLIT: the stack check leaves the
// code at least StackSmall (128) bytes below the return address. saved
// reports whether the code kept RBX, RBP, R12, R13 and R15.
TEXT ·call(SB), 0, $0-25
	MOVQ code+0(FP), AX
	MOVQ frame+8(FP), BX
	MOVQ BP, R12
	MOVQ $0x1234567, R13
	MOVQ BX, R15
	CALL AX
	MOVQ AX, rax+16(FP)
	MOVB $0, saved+24(FP)
	CMPQ R12, BP
	JNE  bad
	CMPQ R13, $0x1234567
	JNE  bad
	CMPQ R15, BX
	JNE  bad
	CMPQ BX, frame+8(FP)
	JNE  bad
	MOVB $1, saved+24(FP)
bad:
	RET
