package probe

// Expr is a node of the typed expression IR that conditions and fetches
// compile from. The parser builds it; Bind resolves names against a Site;
// engines compile the bound tree (bytecode for ptrace, eBPF for uprobe).
//
// Semantics (docs/spec.md): all arithmetic is on 64-bit integers; Type says
// how a value is extended and compared. Division or modulo by zero yields 0
// (x/0 = 0, x%0 = 0 on every engine). Shift counts are masked to 0..63.
// A faulting memory read makes a condition false and a fetch unreadable.
type Expr interface {
	Type() Type
	String() string
}

// Type is the static type of an IR value.
type Type struct {
	Size   uint8 // 1, 2, 4 or 8 bytes (0 for strings)
	Signed bool
	Str    bool // a string (str() or a literal), comparable only with == and !=
}

var (
	U8  = Type{Size: 1}
	U16 = Type{Size: 2}
	U32 = Type{Size: 4}
	U64 = Type{Size: 8}
	S8  = Type{Size: 1, Signed: true}
	S16 = Type{Size: 2, Signed: true}
	S32 = Type{Size: 4, Signed: true}
	S64 = Type{Size: 8, Signed: true}
	Str = Type{Str: true}
)

// Op is a unary or binary operator.
type Op uint8

const (
	OpInvalid Op = iota
	// unary
	OpNeg   // -x
	OpNot   // !x
	OpCompl // ~x
	// binary arithmetic
	OpAdd
	OpSub
	OpMul
	OpDiv
	OpMod
	OpShl
	OpShr
	OpAnd
	OpOr
	OpXor
	// comparison (result S64 0 or 1)
	OpEq
	OpNe
	OpLt
	OpLe
	OpGt
	OpGe
	// logic, short-circuit
	OpLAnd
	OpLOr
)

// Const is an integer literal.
type Const struct {
	Val uint64
	T   Type
}

// StrLit is a string literal, usable only in string comparisons.
type StrLit struct{ Val string }

// Arg is the N-th (1-based) integer argument of the probed function under
// the site's ABI: registers first, then the stack.
type Arg struct{ N int }

// Reg is a general register's 64-bit value where the probe fires (USDT
// operands: 8@%rbx, -4@8(%rbp)). Name is the 64-bit register's name: rax,
// rbx, rcx, rdx, rsi, rdi, rbp, rsp, r8..r15, rip (rip is the probed
// instruction's address). Bind puts Regs in place of a USDT site's argN;
// the parser never makes one.
type Reg struct{ Name string }

// Ident is a name the parser could not resolve by itself: a DWARF
// parameter name. Bind replaces it with an Arg.
type Ident struct{ Name string }

// Builtin is a value the engine supplies at the hit.
type Builtin uint8

const (
	BuiltinRet Builtin = iota + 1 // return value (return probes only)
	BuiltinPID                    // process id (tgid)
	BuiltinTID                    // thread id

	// BuiltinEntryArg+n-1 is argument n (1..MaxEntryArgs) as it was at the
	// call's entry, in a return probe: the engine saved it then, since
	// the registers are clobbered by the return. Only prototypes make one
	// (ltrace.conf's output arguments, entryarg.go); the grammar has none.
	BuiltinEntryArg Builtin = 16
)

// Unary applies Op (OpNeg, OpNot, OpCompl) to X.
type Unary struct {
	Op Op
	X  Expr
}

// Binary applies Op to X and Y. For string operands only OpEq and OpNe
// are valid and compare at most MaxStrLen bytes.
type Binary struct {
	Op   Op
	X, Y Expr
	T    Type // result type
}

// Ternary is C's c ? t : f.
type Ternary struct {
	Cond, Then, Else Expr
	T                Type
}

// Cast truncates and re-extends X to T (u8..u64, s8..s64).
type Cast struct {
	To Type
	X  Expr
}

// Deref reads T.Size bytes of tracee memory at Addr: *(u32*)(arg1+8).
type Deref struct {
	T    Type
	Addr Expr
}

// StrOf reads a NUL-terminated string of at most MaxStrLen bytes at Addr.
type StrOf struct {
	Addr Expr
	// Len, when set, makes this a buffer of that many bytes, NULs
	// included (at most MaxStrLen), rather than a NUL-terminated string:
	// ltrace's string[argN], as memcpy's source. Only prototypes make
	// one, as a fetch (an Arg or a Const); the grammar has no syntax for
	// it and conditions never hold one.
	Len Expr
}

// MaxStrLen bounds string reads and comparisons on every engine.
const MaxStrLen = 256

func (e *Const) Type() Type {
	if e.T.Size == 0 {
		return S64
	}
	return e.T
}
func (*StrLit) Type() Type { return Str }
func (*Arg) Type() Type    { return U64 }
func (*Reg) Type() Type    { return U64 }
func (*Ident) Type() Type  { return U64 }
func (b Builtin) Type() Type {
	if b.EntryArgN() > 0 {
		return U64
	}
	return S64
}
func (e *Unary) Type() Type {
	if e.Op == OpNot {
		return S64
	}
	return e.X.Type()
}
func (e *Binary) Type() Type  { return e.T }
func (e *Ternary) Type() Type { return e.T }
func (e *Cast) Type() Type    { return e.To }
func (e *Deref) Type() Type   { return e.T }
func (*StrOf) Type() Type     { return Str }
