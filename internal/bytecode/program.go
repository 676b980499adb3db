package bytecode

import (
	"fmt"

	"github.com/utap/utap/probe"
)

// Program is a compiled condition or fetch.
//
// A Program carries its own register file and read buffers so that
// evaluating it allocates nothing: it is not safe for concurrent use. The
// ptrace engine evaluates on its one tracer thread; use Clone to evaluate
// the same program from another goroutine.
type Program struct {
	code   []insn
	lits   []string
	regs   int        // registers used
	typ    probe.Type // result type
	lit    string     // result of a program that is a string literal
	isLit  bool
	format probe.Format

	scratch *scratch
}

// scratch is the mutable state of an evaluation.
type scratch struct {
	r    [numRegs]uint64
	buf  [probe.MaxStrLen]byte // integer reads, str() results, first string of a comparison
	buf2 [probe.MaxStrLen]byte // second string of a comparison
	slen int                   // length of the last str() read into buf
	null bool                  // the last str() was of address 0 (probe.Value.Null)
}

// Compile compiles an integer or string expression (bound: no Ident left).
func Compile(e probe.Expr) (*Program, error) { return compile(e, false) }

func compile(e probe.Expr, cond bool) (*Program, error) {
	if e == nil {
		return nil, fmt.Errorf("%w: no expression", ErrUnsupported)
	}
	if d := depth(e); d > MaxDepth {
		return nil, fmt.Errorf("%s: %w: %d levels, at most %d", e, ErrTooDeep, d, MaxDepth)
	}
	p := &Program{typ: e.Type(), scratch: new(scratch)}
	c := &compiler{}
	var err error
	s := simplify(e)
	if cond {
		s = truth(s)
	}
	switch n := s.(type) {
	case *probe.StrLit:
		p.lit, p.isLit = n.Val, true
	case *probe.StrOf:
		if n.Len != nil {
			// A sized string: its length (an argument or a constant) in
			// register 1, read after the address.
			if _, err = c.expr(n.Addr, 0); err == nil {
				if _, err = c.expr(n.Len, 1); err == nil {
					c.emit(insn{op: opBuf, a: 0, b: 1})
				}
			}
			break
		}
		if _, err = c.expr(n.Addr, 0); err == nil {
			c.emit(insn{op: opStr, a: 0})
		}
	default:
		if p.typ.Str {
			err = fmt.Errorf("%w: string expression %s", ErrUnsupported, n)
			break
		}
		_, err = c.expr(n, 0)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", e, err)
	}
	p.code, p.lits, p.regs = c.code, c.lits, c.regs
	return p, nil
}

// CompileCond compiles a condition; nil compiles to a program that is
// always true. Only the truth of the result matters, so a top-level
// `!= 0` costs nothing.
func CompileCond(e probe.Expr) (*Program, error) {
	if e == nil {
		return &Program{typ: probe.S64, scratch: new(scratch), code: []insn{{op: opConst, imm: 1}}, regs: 1}, nil
	}
	if e.Type().Str {
		return nil, fmt.Errorf("%s: %w: a string is not a condition", e, ErrUnsupported)
	}
	return compile(e, true)
}

// truth strips what does not change whether e is zero: x != 0 and casts
// to 64 bits.
func truth(e probe.Expr) probe.Expr {
	for {
		switch n := e.(type) {
		case *probe.Binary:
			k, ok := n.Y.(*probe.Const)
			if n.Op != probe.OpNe || !ok || constVal(k) != 0 {
				return e
			}
			e = n.X
		case *probe.Cast:
			if n.To.Size != 8 {
				return e
			}
			e = n.X
		default:
			return e
		}
	}
}

// CompileFetch compiles one fetch; Fetch then gives its event value.
func CompileFetch(f probe.Fetch) (*Program, error) {
	p, err := Compile(f.Expr)
	if err != nil {
		return nil, err
	}
	p.format = f.Format
	return p, nil
}

// Clone returns a copy of p with its own scratch state, for another goroutine.
func (p *Program) Clone() *Program {
	q := *p
	q.scratch = new(scratch)
	return &q
}

// Len is the number of instructions.
func (p *Program) Len() int { return len(p.code) }

// Type is the type of the program's result.
func (p *Program) Type() probe.Type { return p.typ }

// Eval evaluates p, reading arguments through env.Arg.
func (p *Program) Eval(env probe.Env) (probe.Value, error) { return p.EvalArgs(nil, env) }

// EvalArgs evaluates p with the first len(args) arguments preloaded
// (args[0] is arg1), which saves an interface call per argument; later
// arguments come from env.Arg. The error of a failed read wraps
// probe.ErrFault.
func (p *Program) EvalArgs(args []uint64, env probe.Env) (probe.Value, error) {
	if p.isLit {
		return probe.Value{Str: p.lit, IsStr: true, Format: p.format}, nil
	}
	v, err := p.run(args, env)
	if err != nil {
		return probe.Value{Format: p.format}, err
	}
	if p.typ.Str && p.scratch.null {
		return probe.Value{Null: true, Format: p.format}, nil
	}
	if p.typ.Str {
		return probe.Value{Str: string(p.scratch.buf[:p.scratch.slen]), IsStr: true, Format: p.format}, nil
	}
	return probe.Value{Int: v, Signed: p.typ.Signed, Format: p.format}, nil
}

// Cond evaluates p as a condition: a faulting read makes it false.
func (p *Program) Cond(args []uint64, env probe.Env) bool {
	v, err := p.run(args, env)
	return err == nil && v != 0
}

// Fetch evaluates p as a fetch: a faulting read gives a Value with Err set,
// as probe.FetchValue does.
func (p *Program) Fetch(args []uint64, env probe.Env) probe.Value {
	v, err := p.EvalArgs(args, env)
	if err != nil {
		return probe.Value{Err: true, Format: p.format}
	}
	return v
}

// OnlyRet says whether p's value depends on nothing but the return value
// (a prototype's typed return: a cast of ret): a return pad need not
// record it, its reader makes it from the record's rax (RetValue).
func (p *Program) OnlyRet() bool {
	if p.isLit || p.typ.Str {
		return false
	}
	ret := false
	for _, in := range p.code {
		switch {
		case in.op == opRet:
			ret = true
		case in.op == opArg || in.op == opReg || in.op == opEntry || in.op == opPID || in.op == opTID ||
			in.op >= opLoad8 && in.op <= opBuf:
			return false
		}
	}
	return ret
}

// RetValue is the value p (OnlyRet) gives when the return value is rax.
func (p *Program) RetValue(rax uint64) probe.Value {
	return p.Fetch(nil, retEnv(rax))
}

// retEnv is the environment of an OnlyRet program: the return value.
type retEnv uint64

func (r retEnv) Arg(int) (uint64, error) { return 0, ErrFault }
func (r retEnv) Builtin(b probe.Builtin) uint64 {
	if b == probe.BuiltinRet {
		return uint64(r)
	}
	return 0
}
func (r retEnv) Reg(string) (uint64, error) { return 0, ErrFault }
func (r retEnv) Read(uint64, []byte) error  { return ErrFault }
