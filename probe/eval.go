package probe

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
)

// Env is what the reference evaluator reads at a probe hit.
type Env interface {
	// Arg returns the n-th (1-based) integer argument; stack arguments may
	// fail to read (the error should wrap ErrFault).
	Arg(n int) (uint64, error)
	Builtin(b Builtin) uint64
	// Reg returns a 64-bit general register's value at the hit, by Reg's
	// names (rax..r15, rsp, rbp; rip is the probed instruction's address).
	Reg(name string) (uint64, error)
	// Read fills p from tracee memory at addr, or fails.
	Read(addr uint64, p []byte) error
}

// Eval evaluates a bound expression (no Ident left) at one probe hit, per
// the semantics in expr.go and docs/spec.md. It is the reference every
// engine's compiled form must agree with. Integer results carry Signed from
// the expression's type; string results set IsStr.
func Eval(e Expr, env Env) (Value, error) {
	t := e.Type()
	if !t.Str {
		v, err := evalInt(e, env)
		return Value{Int: v, Signed: t.Signed}, err
	}
	switch e := e.(type) {
	case *StrLit:
		return Value{Str: e.Val, IsStr: true}, nil
	case *StrOf:
		if addr, err := evalInt(e.Addr, env); err == nil && addr == 0 {
			return Value{Null: true}, nil
		}
		buf := getBuf()
		defer putBuf(buf)
		if e.Len != nil {
			b, err := readBuf(e, env, buf)
			return Value{Str: string(b), IsStr: true}, err
		}
		s, err := readStr(e, env, buf, MaxStrLen)
		return Value{Str: string(s), IsStr: true}, err
	}
	return Value{}, fmt.Errorf("probe: cannot evaluate %T as a string", e)
}

// EvalCond evaluates a condition: nil is true; a faulting read is false.
func EvalCond(e Expr, env Env) bool {
	if e == nil {
		return true
	}
	v, err := evalInt(e, env)
	return err == nil && v != 0
}

// FetchValue evaluates one fetch for an event: a fault gives Value.Err.
func FetchValue(f Fetch, env Env) Value {
	v, err := Eval(f.Expr, env)
	if err != nil {
		v = Value{Err: true}
	}
	v.Format = f.Format
	return v
}

// ext truncates v to t and extends it back to 64 bits by t's signedness.
func ext(v uint64, t Type) uint64 {
	switch t.Size {
	case 1:
		if t.Signed {
			return uint64(int64(int8(v)))
		}
		return uint64(uint8(v))
	case 2:
		if t.Signed {
			return uint64(int64(int16(v)))
		}
		return uint64(uint16(v))
	case 4:
		if t.Signed {
			return uint64(int64(int32(v)))
		}
		return uint64(uint32(v))
	}
	return v
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// evalInt evaluates an integer expression. It does not allocate unless it
// reads tracee memory through a non-inlinable Env or fails.
func evalInt(e Expr, env Env) (uint64, error) {
	switch e := e.(type) {
	case *Const:
		return ext(e.Val, e.Type()), nil
	case *Arg:
		v, err := env.Arg(e.N)
		if err != nil && !errors.Is(err, ErrFault) {
			err = fmt.Errorf("%w: arg%d: %v", ErrFault, e.N, err)
		}
		return v, err
	case Builtin:
		return env.Builtin(e), nil
	case *Reg:
		return env.Reg(e.Name)
	case *Unary:
		x, err := evalInt(e.X, env)
		if err != nil {
			return 0, err
		}
		switch e.Op {
		case OpNeg:
			x = -x
		case OpCompl:
			x = ^x
		case OpNot:
			x = b2u(x == 0)
		default:
			return 0, fmt.Errorf("probe: bad unary operator %v", e.Op)
		}
		return ext(x, e.Type()), nil
	case *Binary:
		return evalBinary(e, env)
	case *Ternary:
		c, err := evalInt(e.Cond, env)
		if err != nil {
			return 0, err
		}
		var v uint64
		if c != 0 {
			v, err = evalInt(e.Then, env)
		} else {
			v, err = evalInt(e.Else, env)
		}
		return ext(v, e.T), err
	case *Cast:
		x, err := evalInt(e.X, env)
		return ext(x, e.To), err
	case *Deref:
		a, err := evalInt(e.Addr, env)
		if err != nil {
			return 0, err
		}
		return readInt(a, e.T, env)
	case *Ident:
		return 0, fmt.Errorf("probe: parameter %q is unbound (Site.Bind resolves names)", e.Name)
	}
	return 0, fmt.Errorf("probe: cannot evaluate %s as an integer", e)
}

func evalBinary(e *Binary, env Env) (uint64, error) {
	x, err := evalInt2(e.X, env)
	if err != nil {
		return 0, err
	}
	// Short-circuit before evaluating Y, as C does: Y may fault.
	switch e.Op {
	case OpLAnd:
		if x == 0 {
			return 0, nil
		}
		y, err := evalInt(e.Y, env)
		return b2u(y != 0), err
	case OpLOr:
		if x != 0 {
			return 1, nil
		}
		y, err := evalInt(e.Y, env)
		return b2u(y != 0), err
	case OpEq, OpNe:
		if e.X.Type().Str {
			eq, err := strEqual(e.X, e.Y, env)
			return b2u(eq == (e.Op == OpEq)), err
		}
	}
	y, err := evalInt(e.Y, env)
	if err != nil {
		return 0, err
	}
	signed := e.X.Type().Signed && e.Y.Type().Signed
	var v uint64
	switch e.Op {
	case OpAdd:
		v = x + y
	case OpSub:
		v = x - y
	case OpMul:
		v = x * y
	case OpDiv:
		switch {
		case y == 0:
			v = 0
		case signed && int64(y) == -1:
			v = -x // INT64_MIN / -1 wraps to INT64_MIN
		case signed:
			v = uint64(int64(x) / int64(y))
		default:
			v = x / y
		}
	case OpMod:
		switch {
		case y == 0:
			v = 0
		case signed && int64(y) == -1:
			v = 0
		case signed:
			v = uint64(int64(x) % int64(y))
		default:
			v = x % y
		}
	case OpShl:
		v = x << (y & 63)
	case OpShr:
		if e.X.Type().Signed {
			v = uint64(int64(x) >> (y & 63))
		} else {
			v = x >> (y & 63)
		}
	case OpAnd:
		v = x & y
	case OpOr:
		v = x | y
	case OpXor:
		v = x ^ y
	case OpEq:
		v = b2u(x == y)
	case OpNe:
		v = b2u(x != y)
	case OpLt, OpLe, OpGt, OpGe:
		v = compare(e.Op, x, y, signed)
	default:
		return 0, fmt.Errorf("probe: bad binary operator %v", e.Op)
	}
	return ext(v, e.T), nil
}

// evalInt2 is evalInt for the left operand of a Binary, which is a string
// for string comparisons: strEqual evaluates those.
func evalInt2(e Expr, env Env) (uint64, error) {
	if e.Type().Str {
		return 0, nil
	}
	return evalInt(e, env)
}

func compare(op Op, x, y uint64, signed bool) uint64 {
	var lt, eq bool
	if signed {
		lt = int64(x) < int64(y)
	} else {
		lt = x < y
	}
	eq = x == y
	switch op {
	case OpLt:
		return b2u(lt)
	case OpLe:
		return b2u(lt || eq)
	case OpGt:
		return b2u(!lt && !eq)
	}
	return b2u(!lt) // OpGe
}

// readInt reads t.Size little-endian bytes at addr and extends them.
func readInt(addr uint64, t Type, env Env) (uint64, error) {
	buf := getBuf()
	defer putBuf(buf)
	p := buf[:t.Size]
	if err := env.Read(addr, p); err != nil {
		return 0, fault(addr, len(p), err)
	}
	var v uint64
	switch t.Size {
	case 1:
		v = uint64(p[0])
	case 2:
		v = uint64(binary.LittleEndian.Uint16(p))
	case 4:
		v = uint64(binary.LittleEndian.Uint32(p))
	default:
		v = binary.LittleEndian.Uint64(p)
	}
	return ext(v, t), nil
}

func fault(addr uint64, n int, err error) error {
	if errors.Is(err, ErrFault) {
		return err
	}
	return fmt.Errorf("%w: %d bytes at %#x: %v", ErrFault, n, addr, err)
}

// strEqual compares two string operands: a str() and a literal, or two
// str(). Against a literal only len(lit)+1 bytes are read (the literal and
// its NUL): a longer tracee string differs already, and bytes past that
// point cannot fault the comparison.
func strEqual(x, y Expr, env Env) (bool, error) {
	if _, ok := x.(*StrLit); ok {
		x, y = y, x
	}
	sx, ok := x.(*StrOf)
	if !ok {
		return false, fmt.Errorf("probe: cannot compare %s as a string", x)
	}
	bx := getBuf()
	defer putBuf(bx)
	if lit, ok := y.(*StrLit); ok {
		s, err := readStr(sx, env, bx, min(len(lit.Val)+1, MaxStrLen))
		return string(s) == lit.Val, err
	}
	sy, ok := y.(*StrOf)
	if !ok {
		return false, fmt.Errorf("probe: cannot compare %s as a string", y)
	}
	by := getBuf()
	defer putBuf(by)
	a, err := readStr(sx, env, bx, MaxStrLen)
	if err != nil {
		return false, err
	}
	b, err := readStr(sy, env, by, MaxStrLen)
	return bytes.Equal(a, b), err
}

// pageSize splits string reads so that a short string just below an
// unmapped page does not fault.
const pageSize = 4096

// readStr reads the NUL-terminated string at e.Addr, without its NUL: at
// most limit (<= MaxStrLen) bytes, as bpf_probe_read_user_str with a
// limit+1 buffer: like the kernel, it reads up to limit+1 bytes, so a
// string that fills limit with no NUL faults if the byte after it is
// unreadable. It faults if an unreadable byte comes first.
func readStr(e *StrOf, env Env, buf *[MaxStrLen]byte, limit int) ([]byte, error) {
	addr, err := evalInt(e.Addr, env)
	if err != nil {
		return nil, err
	}
	n := 0
	for n < limit {
		a := addr + uint64(n)
		chunk := min(limit-n, int(pageSize-a%pageSize))
		p := buf[n : n+chunk]
		if err := env.Read(a, p); err != nil {
			// The Env may map memory more finely than pages: the string
			// is readable if its NUL comes before the first bad byte.
			return readStrSlow(a, env, buf, n, limit)
		}
		if i := bytes.IndexByte(p, 0); i >= 0 {
			return buf[:n+i], nil
		}
		n += chunk
	}
	return buf[:limit], beyond(addr+uint64(limit), env)
}

// readBuf reads a sized string (StrOf.Len): that many bytes, at most
// MaxStrLen, NULs included.
func readBuf(e *StrOf, env Env, buf *[MaxStrLen]byte) ([]byte, error) {
	addr, err := evalInt(e.Addr, env)
	if err != nil {
		return nil, err
	}
	n, err := evalInt(e.Len, env)
	if err != nil {
		return nil, err
	}
	p := buf[:min(n, MaxStrLen)]
	if err := env.Read(addr, p); err != nil {
		return nil, fault(addr, len(p), err)
	}
	return p, nil
}

// beyond reads the byte after a string cut at its limit: the kernel's
// bpf_probe_read_user_str reads it too, and faults if it can't.
func beyond(addr uint64, env Env) error {
	var b [1]byte
	if err := env.Read(addr, b[:]); err != nil {
		return fault(addr, 1, err)
	}
	return nil
}

// readStrSlow continues readStr a byte at a time from buf[n], at addr.
func readStrSlow(addr uint64, env Env, buf *[MaxStrLen]byte, n, limit int) ([]byte, error) {
	for ; n < limit; n, addr = n+1, addr+1 {
		if err := env.Read(addr, buf[n:n+1]); err != nil {
			return nil, fault(addr, 1, err)
		}
		if buf[n] == 0 {
			return buf[:n], nil
		}
	}
	return buf[:n], beyond(addr, env)
}

// bufPool recycles read buffers: a slice passed to Env.Read escapes, and
// the ptrace engine evaluates at every hit.
var bufPool = sync.Pool{New: func() any { return new([MaxStrLen]byte) }}

func getBuf() *[MaxStrLen]byte  { return bufPool.Get().(*[MaxStrLen]byte) }
func putBuf(b *[MaxStrLen]byte) { bufPool.Put(b) }
