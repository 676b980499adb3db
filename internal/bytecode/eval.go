package bytecode

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/utap/utap/probe"
)

// ErrFault is returned (preallocated, so a faulting hit allocates nothing)
// when an argument or memory read fails. It wraps probe.ErrFault.
var ErrFault = fmt.Errorf("bytecode: %w", probe.ErrFault)

var errBadOp = errors.New("bytecode: bad opcode")

func u2b(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// run executes the program and returns register 0.
func (p *Program) run(args []uint64, env probe.Env) (uint64, error) {
	s := p.scratch
	r := &s.r
	code := p.code
	for pc := 0; pc < len(code); pc++ {
		in := &code[pc]
		switch in.op {
		case opConst:
			r[in.dst] = in.imm
		case opArg:
			if n := in.imm; n-1 < uint64(len(args)) {
				r[in.dst] = args[n-1]
			} else {
				v, err := env.Arg(int(n))
				if err != nil {
					return 0, ErrFault
				}
				r[in.dst] = v
			}
		case opReg:
			v, err := readReg(env, int(in.imm))
			if err != nil {
				return 0, err
			}
			r[in.dst] = v
		case opPID:
			r[in.dst] = env.Builtin(probe.BuiltinPID)
		case opTID:
			r[in.dst] = env.Builtin(probe.BuiltinTID)
		case opRet:
			r[in.dst] = env.Builtin(probe.BuiltinRet)
		case opEntry:
			r[in.dst] = env.Builtin(probe.EntryArg(int(in.imm)))
		case opMov:
			r[in.dst] = r[in.a]
		case opNeg:
			r[in.dst] = -r[in.a]
		case opNot:
			r[in.dst] = u2b(r[in.a] == 0)
		case opCompl:
			r[in.dst] = ^r[in.a]
		case opSext8:
			r[in.dst] = uint64(int8(r[in.a]))
		case opSext16:
			r[in.dst] = uint64(int16(r[in.a]))
		case opSext32:
			r[in.dst] = uint64(int32(r[in.a]))
		case opZext8:
			r[in.dst] = uint64(uint8(r[in.a]))
		case opZext16:
			r[in.dst] = uint64(uint16(r[in.a]))
		case opZext32:
			r[in.dst] = uint64(uint32(r[in.a]))

		case opAdd:
			r[in.dst] = r[in.a] + r[in.b]
		case opSub:
			r[in.dst] = r[in.a] - r[in.b]
		case opMul:
			r[in.dst] = r[in.a] * r[in.b]
		case opUDiv:
			r[in.dst] = udiv(r[in.a], r[in.b])
		case opSDiv:
			r[in.dst] = sdiv(r[in.a], r[in.b])
		case opUMod:
			r[in.dst] = umod(r[in.a], r[in.b])
		case opSMod:
			r[in.dst] = smod(r[in.a], r[in.b])
		case opShl:
			r[in.dst] = r[in.a] << (r[in.b] & 63)
		case opShr:
			r[in.dst] = r[in.a] >> (r[in.b] & 63)
		case opSar:
			r[in.dst] = uint64(int64(r[in.a]) >> (r[in.b] & 63))
		case opAnd:
			r[in.dst] = r[in.a] & r[in.b]
		case opOr:
			r[in.dst] = r[in.a] | r[in.b]
		case opXor:
			r[in.dst] = r[in.a] ^ r[in.b]
		case opEq:
			r[in.dst] = u2b(r[in.a] == r[in.b])
		case opNe:
			r[in.dst] = u2b(r[in.a] != r[in.b])
		case opULt:
			r[in.dst] = u2b(r[in.a] < r[in.b])
		case opULe:
			r[in.dst] = u2b(r[in.a] <= r[in.b])
		case opSLt:
			r[in.dst] = u2b(int64(r[in.a]) < int64(r[in.b]))
		case opSLe:
			r[in.dst] = u2b(int64(r[in.a]) <= int64(r[in.b]))

		case opAddI:
			r[in.dst] = r[in.a] + in.imm
		case opRSubI:
			r[in.dst] = in.imm - r[in.a]
		case opMulI:
			r[in.dst] = r[in.a] * in.imm
		case opUDivI:
			r[in.dst] = udiv(r[in.a], in.imm)
		case opSDivI:
			r[in.dst] = sdiv(r[in.a], in.imm)
		case opUModI:
			r[in.dst] = umod(r[in.a], in.imm)
		case opSModI:
			r[in.dst] = smod(r[in.a], in.imm)
		case opShlI:
			r[in.dst] = r[in.a] << in.imm
		case opShrI:
			r[in.dst] = r[in.a] >> in.imm
		case opSarI:
			r[in.dst] = uint64(int64(r[in.a]) >> in.imm)
		case opAndI:
			r[in.dst] = r[in.a] & in.imm
		case opOrI:
			r[in.dst] = r[in.a] | in.imm
		case opXorI:
			r[in.dst] = r[in.a] ^ in.imm
		case opEqI:
			r[in.dst] = u2b(r[in.a] == in.imm)
		case opNeI:
			r[in.dst] = u2b(r[in.a] != in.imm)
		case opULtI:
			r[in.dst] = u2b(r[in.a] < in.imm)
		case opULeI:
			r[in.dst] = u2b(r[in.a] <= in.imm)
		case opUGtI:
			r[in.dst] = u2b(r[in.a] > in.imm)
		case opUGeI:
			r[in.dst] = u2b(r[in.a] >= in.imm)
		case opSLtI:
			r[in.dst] = u2b(int64(r[in.a]) < int64(in.imm))
		case opSLeI:
			r[in.dst] = u2b(int64(r[in.a]) <= int64(in.imm))
		case opSGtI:
			r[in.dst] = u2b(int64(r[in.a]) > int64(in.imm))
		case opSGeI:
			r[in.dst] = u2b(int64(r[in.a]) >= int64(in.imm))

		case opLoad8, opLoad8S, opLoad16, opLoad16S, opLoad32, opLoad32S, opLoad64:
			v, err := s.load(in.op, r[in.a]+in.imm, env)
			if err != nil {
				return 0, err
			}
			r[in.dst] = v
		case opStrEq:
			lit := p.lits[in.imm]
			str, err := s.readStr(r[in.a], env, &s.buf, min(len(lit)+1, probe.MaxStrLen))
			if err != nil {
				return 0, err
			}
			r[in.dst] = u2b(string(str) == lit) ^ uint64(in.b)
		case opStrEqS:
			x, err := s.readStr(r[in.a], env, &s.buf, probe.MaxStrLen)
			if err != nil {
				return 0, err
			}
			y, err := s.readStr(r[in.b], env, &s.buf2, probe.MaxStrLen)
			if err != nil {
				return 0, err
			}
			r[in.dst] = u2b(string(x) == string(y)) ^ in.imm
		case opBuf:
			if s.null = r[in.a] == 0; s.null {
				s.slen = 0 // NULL, as a string's
				continue
			}
			n := min(r[in.b], probe.MaxStrLen)
			if err := env.Read(r[in.a], s.buf[:n]); err != nil {
				return 0, err
			}
			s.slen = int(n)
		case opStr:
			if s.null = r[in.a] == 0; s.null {
				s.slen = 0
				continue
			}
			str, err := s.readStr(r[in.a], env, &s.buf, probe.MaxStrLen)
			if err != nil {
				return 0, err
			}
			s.slen = len(str)

		case opJmp:
			pc = int(in.imm) - 1
		case opJz:
			if r[in.a] == 0 {
				pc = int(in.imm) - 1
			}
		case opJnz:
			if r[in.a] != 0 {
				pc = int(in.imm) - 1
			}
		case opNop:
		default:
			return 0, errBadOp
		}
	}
	return r[0], nil
}

func udiv(x, y uint64) uint64 {
	if y == 0 {
		return 0
	}
	return x / y
}

func umod(x, y uint64) uint64 {
	if y == 0 {
		return 0
	}
	return x % y
}

// sdiv and smod rely on Go's definition of MinInt64 / -1 (= MinInt64,
// remainder 0), which is also the reference's.
func sdiv(x, y uint64) uint64 {
	if y == 0 {
		return 0
	}
	return uint64(int64(x) / int64(y))
}

func smod(x, y uint64) uint64 {
	if y == 0 {
		return 0
	}
	return uint64(int64(x) % int64(y))
}

// load reads and extends one integer of tracee memory.
func (s *scratch) load(op opcode, addr uint64, env probe.Env) (uint64, error) {
	var n int
	switch op {
	case opLoad8, opLoad8S:
		n = 1
	case opLoad16, opLoad16S:
		n = 2
	case opLoad32, opLoad32S:
		n = 4
	default:
		n = 8
	}
	p := s.buf[:n]
	if env.Read(addr, p) != nil {
		return 0, ErrFault
	}
	switch op {
	case opLoad8:
		return uint64(p[0]), nil
	case opLoad8S:
		return uint64(int8(p[0])), nil
	case opLoad16:
		return uint64(binary.LittleEndian.Uint16(p)), nil
	case opLoad16S:
		return uint64(int16(binary.LittleEndian.Uint16(p))), nil
	case opLoad32:
		return uint64(binary.LittleEndian.Uint32(p)), nil
	case opLoad32S:
		return uint64(int32(binary.LittleEndian.Uint32(p))), nil
	}
	return binary.LittleEndian.Uint64(p), nil
}
