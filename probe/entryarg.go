package probe

// Output arguments (ltrace.conf's '+': read(int, +string[retval], ulong))
// are filled by the call: an entry probe shows the arguments before the
// first one, and the return probe the rest, read at the return from the
// values the arguments had at the entry (BuiltinEntryArg), which each
// engine saves with the call's start.

// MaxEntryArgs is how many arguments an engine saves at a call's entry:
// the System V integer argument registers.
const MaxEntryArgs = 6

// EntryArg is argument n (1..MaxEntryArgs) as it was at the call's entry.
func EntryArg(n int) Builtin { return BuiltinEntryArg + Builtin(n-1) }

// EntryArgN is the argument b is the entry value of, 0 for another builtin.
func (b Builtin) EntryArgN() int {
	if b >= BuiltinEntryArg && b < BuiltinEntryArg+MaxEntryArgs {
		return int(b-BuiltinEntryArg) + 1
	}
	return 0
}

// UsesEntryArgs says whether a site's condition or fetches read an
// argument's entry value: its engine must save them at the call's start.
func (s *Site) UsesEntryArgs() bool {
	if usesEntryArgs(s.Cond) {
		return true
	}
	for _, f := range s.Fetches {
		if usesEntryArgs(f.Expr) {
			return true
		}
	}
	return false
}

func usesEntryArgs(e Expr) bool {
	switch e := e.(type) {
	case Builtin:
		return e.EntryArgN() > 0
	case *Unary:
		return usesEntryArgs(e.X)
	case *Binary:
		return usesEntryArgs(e.X) || usesEntryArgs(e.Y)
	case *Ternary:
		return usesEntryArgs(e.Cond) || usesEntryArgs(e.Then) || usesEntryArgs(e.Else)
	case *Cast:
		return usesEntryArgs(e.X)
	case *Deref:
		return usesEntryArgs(e.Addr)
	case *StrOf:
		return usesEntryArgs(e.Addr) || e.Len != nil && usesEntryArgs(e.Len)
	}
	return false
}

// firstOut is the index of the first output argument of s's prototype,
// len(Params) when there is none or no return twin shows them.
func (s *Site) firstOut() int {
	p := s.proto()
	if !s.Spec.Twinned {
		return len(p.Params)
	}
	return p.firstOut()
}

func (p *Prototype) firstOut() int {
	for i, t := range p.Params {
		if t.Out && i < MaxEntryArgs {
			return i
		}
	}
	return len(p.Params)
}

// HasOut says whether the prototype has an output argument the return
// probe shows.
func (p *Prototype) HasOut() bool { return p.firstOut() < len(p.Params) }

// outFetches are what a return probe shows after the return value: the
// arguments from the first output one on, each from its entry value; an
// output argument's memory is read at the return.
func (s *Site) outFetches() []Fetch {
	p := s.proto()
	var fs []Fetch
	for i := s.firstOut(); i < len(p.Params) && i < MaxEntryArgs; i++ {
		t := p.Params[i]
		f := typedFetch(EntryArg(i+1), t, s.paramName(i))
		if str, ok := f.Expr.(*StrOf); ok {
			switch {
			case t.Kind == ProtoBitvecPtr:
				// A set the call filled (sigaddset's): all its bytes.
			case t.LenRet:
				// [retval]: the bytes the call says it filled, none when
				// it failed or filled nothing.
				str.Len = &Ternary{Cond: &Binary{Op: OpGt, X: BuiltinRet, Y: &Const{T: S64}, T: S64},
					Then: BuiltinRet, Else: &Const{T: S64}, T: S64}
			default:
				// A buffer the call filled with a string (snprintf's
				// +string2): up to its NUL, as ltrace shows it, not
				// the bytes after it.
				str.Len = nil
			}
		}
		fs = append(fs, f)
	}
	return fs
}
