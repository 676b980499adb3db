package bytecode

import (
	"fmt"
	"strings"
)

// String disassembles p, one instruction a line:
//
//	0  arg   r0, 1
//	1  shl   r0, r0, 1
func (p *Program) String() string {
	if p.isLit {
		return fmt.Sprintf("lit %q\n", p.lit)
	}
	var b strings.Builder
	for pc, in := range p.code {
		fmt.Fprintf(&b, "%-3d %-6s ", pc, in.op)
		switch in.op.class() {
		case clsNone:
			fmt.Fprintf(&b, "r%d", in.dst)
		case clsImm:
			if in.op == opReg && in.imm < uint64(len(regNames)) {
				fmt.Fprintf(&b, "r%d, %%%s", in.dst, regNames[in.imm])
				break
			}
			fmt.Fprintf(&b, "r%d, %s", in.dst, imm(in.imm))
		case clsUnary:
			fmt.Fprintf(&b, "r%d, r%d", in.dst, in.a)
		case clsReg:
			fmt.Fprintf(&b, "r%d, r%d, r%d", in.dst, in.a, in.b)
		case clsRegI:
			fmt.Fprintf(&b, "r%d, r%d, %s", in.dst, in.a, imm(in.imm))
		case clsLoad:
			fmt.Fprintf(&b, "r%d, [r%d%+d]", in.dst, in.a, int64(in.imm))
		case clsStr:
			switch in.op {
			case opStrEq:
				op := "=="
				if in.b != 0 {
					op = "!="
				}
				fmt.Fprintf(&b, "r%d, str(r%d) %s %q", in.dst, in.a, op, p.lits[in.imm])
			case opStrEqS:
				op := "=="
				if in.imm != 0 {
					op = "!="
				}
				fmt.Fprintf(&b, "r%d, str(r%d) %s str(r%d)", in.dst, in.a, op, in.b)
			default:
				fmt.Fprintf(&b, "str(r%d)", in.a)
			}
		case clsJump:
			if in.op == opJmp {
				fmt.Fprintf(&b, "%d", in.imm)
			} else {
				fmt.Fprintf(&b, "r%d, %d", in.a, in.imm)
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// imm prints small immediates in decimal and others, like addresses, in hex.
func imm(v uint64) string {
	if int64(v) > -65536 && int64(v) < 65536 {
		return fmt.Sprint(int64(v))
	}
	return fmt.Sprintf("%#x", v)
}
