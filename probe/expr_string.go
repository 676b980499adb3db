package probe

import (
	"fmt"
	"strconv"
)

var opText = [...]string{
	OpNeg: "-", OpNot: "!", OpCompl: "~",
	OpAdd: "+", OpSub: "-", OpMul: "*", OpDiv: "/", OpMod: "%", OpShl: "<<", OpShr: ">>",
	OpAnd: "&", OpOr: "|", OpXor: "^",
	OpEq: "==", OpNe: "!=", OpLt: "<", OpLe: "<=", OpGt: ">", OpGe: ">=",
	OpLAnd: "&&", OpLOr: "||",
}

func (o Op) String() string {
	if int(o) < len(opText) && opText[o] != "" {
		return opText[o]
	}
	return "op(" + strconv.Itoa(int(o)) + ")"
}

func (t Type) String() string {
	if t.Str {
		return "str"
	}
	if t.Signed {
		return "s" + strconv.Itoa(int(t.Size)*8)
	}
	return "u" + strconv.Itoa(int(t.Size)*8)
}

// The String forms are fully parenthesised so that printing and re-parsing
// an expression gives the same tree (the fuzz test relies on it).
func (e *Const) String() string {
	if e.Type().Signed {
		return strconv.FormatInt(int64(e.Val), 10)
	}
	return strconv.FormatUint(e.Val, 10)
}
func (e *StrLit) String() string { return strconv.Quote(e.Val) }
func (e *Arg) String() string    { return "arg" + strconv.Itoa(e.N) }
func (e *Reg) String() string    { return "%" + e.Name }
func (e *Ident) String() string  { return e.Name }
func (b Builtin) String() string {
	switch b {
	case BuiltinRet:
		return "ret"
	case BuiltinPID:
		return "pid"
	case BuiltinTID:
		return "tid"
	}
	if n := b.EntryArgN(); n > 0 {
		return "entry(arg" + strconv.Itoa(n) + ")"
	}
	return "builtin(" + strconv.Itoa(int(b)) + ")"
}
func (e *Unary) String() string  { return "(" + e.Op.String() + e.X.String() + ")" }
func (e *Binary) String() string { return fmt.Sprintf("(%s %s %s)", e.X, e.Op, e.Y) }
func (e *Ternary) String() string {
	return fmt.Sprintf("(%s ? %s : %s)", e.Cond, e.Then, e.Else)
}
func (e *Cast) String() string  { return fmt.Sprintf("((%s)%s)", e.To, e.X) }
func (e *Deref) String() string { return fmt.Sprintf("(*(%s*)%s)", e.T, e.Addr) }
func (e *StrOf) String() string {
	if e.Len != nil {
		return fmt.Sprintf("buf(%s, %s)", e.Addr, e.Len)
	}
	return fmt.Sprintf("str(%s)", e.Addr)
}
