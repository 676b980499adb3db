package bytecode

// opcode is one bytecode operation. Every operation writes register dst;
// a and b are source registers, imm an immediate, an argument number, an
// offset, a literal index or a jump target, as the operation says.
type opcode uint8

const (
	opNop opcode = iota

	opConst  // dst = imm
	opArg    // dst = argument imm (may fault for stack arguments)
	opPID    // dst = pid
	opTID    // dst = tid
	opRet    // dst = return value
	opReg    // dst = register imm at the probe point (regNames order)
	opEntry  // dst = argument imm as it was at the call's entry (return probes)
	opMov    // dst = a
	opNeg    // dst = -a
	opNot    // dst = a == 0
	opCompl  // dst = ^a
	opSext8  // dst = sign-extend low byte of a
	opSext16 //
	opSext32 //
	opZext8  // dst = a & 0xff
	opZext16 //
	opZext32 //

	// register–register: dst = a OP b
	opAdd
	opSub
	opMul
	opUDiv // x/0 = 0
	opSDiv // x/0 = 0, MIN/-1 = MIN
	opUMod // x%0 = 0
	opSMod // x%0 = 0, MIN%-1 = 0
	opShl  // count masked to 0..63
	opShr
	opSar
	opAnd
	opOr
	opXor
	opEq
	opNe
	opULt
	opULe
	opSLt
	opSLe

	// register–immediate: dst = a OP imm (division by a nonzero imm only)
	opAddI
	opRSubI // dst = imm - a
	opMulI
	opUDivI
	opSDivI
	opUModI
	opSModI
	opShlI // imm already masked
	opShrI
	opSarI
	opAndI
	opOrI
	opXorI
	opEqI
	opNeI
	opULtI
	opULeI
	opUGtI
	opUGeI
	opSLtI
	opSLeI
	opSGtI
	opSGeI

	// memory: dst = *(T*)(a + imm), extended; a fault ends the evaluation
	opLoad8
	opLoad8S
	opLoad16
	opLoad16S
	opLoad32
	opLoad32S
	opLoad64

	opStrEq  // dst = str(a) == lits[imm], reading len(lit)+1 bytes; b=1 negates
	opStrEqS // dst = str(a) == str(b); imm=1 negates
	opStr    // read str(a) into the string result
	opBuf    // read r[b] bytes (at most MaxStrLen) at r[a] into the string result, NULs included

	opJmp // pc = imm
	opJz  // if a == 0 { pc = imm }
	opJnz // if a != 0 { pc = imm }

	numOps
)

// insn is one instruction: 16 bytes, so a program of a few dozen
// instructions stays within a couple of cache lines.
type insn struct {
	op     opcode
	dst, a uint8
	b      uint8
	imm    uint64
}

var opNames = [numOps]string{
	opNop: "nop", opConst: "const", opArg: "arg", opPID: "pid", opTID: "tid", opRet: "ret", opReg: "reg", opEntry: "entry",
	opMov: "mov", opNeg: "neg", opNot: "not", opCompl: "compl",
	opSext8: "sext8", opSext16: "sext16", opSext32: "sext32",
	opZext8: "zext8", opZext16: "zext16", opZext32: "zext32",
	opAdd: "add", opSub: "sub", opMul: "mul", opUDiv: "udiv", opSDiv: "sdiv",
	opUMod: "umod", opSMod: "smod", opShl: "shl", opShr: "shr", opSar: "sar",
	opAnd: "and", opOr: "or", opXor: "xor", opEq: "eq", opNe: "ne",
	opULt: "ult", opULe: "ule", opSLt: "slt", opSLe: "sle",
	opAddI: "add", opRSubI: "rsub", opMulI: "mul", opUDivI: "udiv", opSDivI: "sdiv",
	opUModI: "umod", opSModI: "smod", opShlI: "shl", opShrI: "shr", opSarI: "sar",
	opAndI: "and", opOrI: "or", opXorI: "xor", opEqI: "eq", opNeI: "ne",
	opULtI: "ult", opULeI: "ule", opUGtI: "ugt", opUGeI: "uge",
	opSLtI: "slt", opSLeI: "sle", opSGtI: "sgt", opSGeI: "sge",
	opLoad8: "ld8", opLoad8S: "ld8s", opLoad16: "ld16", opLoad16S: "ld16s",
	opLoad32: "ld32", opLoad32S: "ld32s", opLoad64: "ld64",
	opStrEq: "streq", opStrEqS: "streq", opStr: "str", opBuf: "buf",
	opJmp: "jmp", opJz: "jz", opJnz: "jnz",
}

func (o opcode) String() string {
	if o < numOps && opNames[o] != "" {
		return opNames[o]
	}
	return "op?"
}

// class tells how an opcode's operands print and which registers it reads.
type class uint8

const (
	clsNone  class = iota // dst only (pid, tid, ret)
	clsImm                // dst, imm
	clsUnary              // dst, a
	clsReg                // dst, a, b
	clsRegI               // dst, a, imm
	clsLoad               // dst, [a+imm]
	clsStr                // string operations
	clsJump               // jmp imm / jz a, imm
)

func (o opcode) class() class {
	switch {
	case o == opConst || o == opArg || o == opReg || o == opEntry:
		return clsImm
	case o == opPID || o == opTID || o == opRet || o == opNop:
		return clsNone
	case o >= opMov && o <= opZext32:
		return clsUnary
	case o >= opAdd && o <= opSLe:
		return clsReg
	case o >= opAddI && o <= opSGeI:
		return clsRegI
	case o >= opLoad8 && o <= opLoad64:
		return clsLoad
	case o >= opStrEq && o <= opBuf:
		return clsStr
	}
	return clsJump
}
