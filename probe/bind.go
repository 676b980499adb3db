package probe

import (
	"fmt"
	"slices"
	"strings"
)

// Bind fills s.Fetches and s.Cond from s.Spec, replacing every parameter
// name (Ident) with the Arg at its 1-based position in s.Params.
// elfsym.Resolve calls it for every site. The Spec's trees are shared by
// all its sites and are never mutated: paths to a name are rebuilt, the
// rest is shared.
func (s *Site) Bind() error {
	if s.Spec == nil {
		return fmt.Errorf("probe: site %s has no spec", s.where())
	}
	var fetches []Fetch
	switch {
	case s.Syscall, s.Spec.Agg != nil:
		// Decoded whole, as strace shows it; or aggregated, with the
		// aggregation's fetches only: no default fetches.
	case s.USDT && len(s.Spec.Fetches) == 0:
		fetches = s.allArgs()
	case s.typedDefaults() && s.Spec.Kind == Return:
		fetches = s.protoRet()
	case s.typedDefaults():
		fetches = s.protoArgs()
	}
	if len(s.Spec.Fetches) > 0 {
		fetches = make([]Fetch, len(s.Spec.Fetches))
	}
	for i, f := range s.Spec.Fetches {
		e, err := s.bind(f.Expr)
		if err != nil {
			return err
		}
		fetches[i] = Fetch{Expr: e, Format: f.Format, Text: f.Text}
	}
	var cond Expr
	if s.Spec.Cond != nil {
		c, err := s.bind(s.Spec.Cond)
		if err != nil {
			return err
		}
		cond = c
	}
	s.Fetches, s.Cond = fetches, cond
	return nil
}

func (s *Site) where() string {
	if s.Func != "" {
		return s.Func
	}
	return fmt.Sprintf("%#x", s.Addr)
}

// bind returns e with names resolved; e itself when it holds none.
func (s *Site) bind(e Expr) (Expr, error) {
	switch e := e.(type) {
	case *Arg:
		if s.USDT {
			return s.usdtArg(e.N)
		}
		if s.Syscall && e.N > len(s.Params) {
			return nil, &noParamError{fmt.Sprintf("spec %q: %s has no arg%d: %s", s.Spec.Text, s.Func, e.N, s.syscallArgs())}
		}
	case *Ident:
		if s.USDT {
			return nil, &noParamError{fmt.Sprintf("%q: a USDT probe has no parameter names; %s", e.Name, s.argCount())}
		}
		i := slices.Index(s.Params, e.Name)
		if i < 0 {
			return nil, s.noParam(e.Name)
		}
		return &Arg{N: i + 1}, nil
	case *Unary:
		x, err := s.bind(e.X)
		if err != nil || x == e.X {
			return e, err
		}
		return &Unary{Op: e.Op, X: x}, nil
	case *Binary:
		x, err := s.bind(e.X)
		if err != nil {
			return nil, err
		}
		y, err := s.bind(e.Y)
		if err != nil || x == e.X && y == e.Y {
			return e, err
		}
		// A USDT argument has its operand's type, not u64: the result
		// type follows, as the parser would have typed it.
		return &Binary{Op: e.Op, X: x, Y: y, T: binaryType(e.Op, x.Type(), y.Type())}, nil
	case *Ternary:
		c, err := s.bind(e.Cond)
		if err != nil {
			return nil, err
		}
		t, err := s.bind(e.Then)
		if err != nil {
			return nil, err
		}
		f, err := s.bind(e.Else)
		if err != nil || c == e.Cond && t == e.Then && f == e.Else {
			return e, err
		}
		return &Ternary{Cond: c, Then: t, Else: f, T: arithType(t.Type(), f.Type())}, nil
	case *Cast:
		x, err := s.bind(e.X)
		if err != nil || x == e.X {
			return e, err
		}
		return &Cast{To: e.To, X: x}, nil
	case *Deref:
		a, err := s.bind(e.Addr)
		if err != nil || a == e.Addr {
			return e, err
		}
		return &Deref{T: e.T, Addr: a}, nil
	case *StrOf:
		a, err := s.bind(e.Addr)
		if err != nil || a == e.Addr {
			return e, err
		}
		return &StrOf{Addr: a, Len: e.Len}, nil
	}
	return e, nil // leaves: Const, StrLit, Arg, Reg, Builtin
}

func (s *Site) noParam(name string) error {
	if alias, ok := bpftraceNames[name]; ok {
		return &noParamError{fmt.Sprintf("spec %q: %q is bpftrace's spelling: utap's is %s", s.Spec.Text, name, alias)}
	}
	if s.Syscall {
		return &noParamError{fmt.Sprintf("spec %q: %q is not an argument of %s: %s", s.Spec.Text, name, s.Func, s.syscallArgs())}
	}
	params := "none known: no DWARF information"
	if len(s.Params) > 0 {
		params = strings.Join(s.Params, ", ")
	}
	regs := 6
	if s.ABI == ABIGoRegs {
		regs = 9
	}
	return &noParamError{fmt.Sprintf("spec %q: %q is not a parameter of %s (parameters: %s); use arg1..arg%d",
		s.Spec.Text, name, s.where(), params, regs)}
}

// noParamError reads as a sentence yet matches errors.Is(err, ErrNoParam).
type noParamError struct{ msg string }

func (e *noParamError) Error() string { return e.msg }
func (e *noParamError) Unwrap() error { return ErrNoParam }

// syscallArgs names a system call's arguments for errors.
func (s *Site) syscallArgs() string {
	if len(s.Params) == 0 {
		return "it takes no arguments"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "it takes %d (", len(s.Params))
	for i, p := range s.Params {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "arg%d %s", i+1, p)
	}
	b.WriteString(")")
	return b.String()
}

// bpftraceNames are bpftrace builtins utap spells otherwise, for the error
// when one is not a parameter of the probed function.
var bpftraceNames = map[string]string{
	"retval": "ret (the return value, in a return probe: return:FUNC(ret))",
	"args":   "arg1..arg16 or the DWARF parameter names",
	"ustack": "the -k flag",
}
