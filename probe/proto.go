package probe

import "strconv"

// Prototype is what is known of a function's signature, from DWARF or
// ltrace's prototype files: elfsym fills Site.Proto, and Bind turns it
// into the fetches of a probe that names none, so every engine shows typed
// arguments and return values without knowing where they came from.
type Prototype struct {
	Params []ProtoType
	Ret    ProtoType // Kind ProtoVoid for a function returning nothing
	// More: parameters past Params are not shown (variadic, or a
	// parameter that is not passed in an integer register: a float or a
	// struct by value, after which the register mapping is unknown).
	More   bool
	Source string // "dwarf", "ltrace.conf", or "" for the default
}

// ProtoKind says how a prototype's value is read and shown.
type ProtoKind uint8

const (
	ProtoInt       ProtoKind = iota // integer: signed or unsigned per Signed
	ProtoHex                        // integer shown in hex
	ProtoOctal                      // integer shown in octal (ltrace's octal: modes)
	ProtoPointer                    // pointer, shown in hex (NULL for 0)
	ProtoString                     // char*: the NUL-terminated string it points to
	ProtoBool                       // shown false / true
	ProtoChar                       // a character, shown 'c'
	ProtoVoid                       // nothing (a return type only)
	ProtoGuess                      // a long of unknown type: decimal when small, else hex (FormatGuess)
	ProtoBitvec                     // a bit set (ltrace's bitvec): its bits, <0-2,12>
	ProtoBitvecPtr                  // a pointer to a bit set of Size bytes (ltrace's sigset_t*): the set
)

// ProtoType is one parameter's or the return value's type. Size is 1, 2,
// 4 or 8 bytes: the register is truncated to it and extended per Signed,
// so a 32-bit int's -1 is -1 and not 4294967295.
type ProtoType struct {
	Kind   ProtoKind
	Size   uint8
	Signed bool
	// Enum names the values of an enumeration (DWARF's enumerators,
	// ltrace's enum(NAME=VALUE, ...)); nil for other types.
	Enum Enum
	// A ProtoString of a known length (ltrace's string[argN], string[N]):
	// that many bytes are shown, NULs included. LenArg is the 1-based
	// argument holding it, else LenConst the length; both 0: up to a NUL.
	LenArg, LenConst int
	// Format: a printf format (ltrace's format lens), whose conversions
	// say what the variadic arguments after it are.
	Format bool
	// Out: an output argument (ltrace.conf's '+'), which the call fills:
	// shown by the return probe, its memory read at the return
	// (entryarg.go). LenRet: a ProtoString whose length is the return
	// value (ltrace's [retval]).
	Out, LenRet bool
	// CStr: a string of a known length shown up to its first NUL too
	// (ltrace's string[N] and stringN, where string(array(char, N)*)
	// shows every byte): FormatCStr.
	CStr bool
}

// Enum maps an enumeration's values to their names. A value without a
// name is shown as its number.
type Enum map[int64]string

// DefaultProto is ltrace's prototype for a function it knows nothing of:
// four register arguments and a return value, longs shown as ltrace
// shows a value of unknown type (FormatGuess: decimal from -10000 to
// 10000, else hex; measured on ltrace 0.7.3).
var DefaultProto = Prototype{
	Params: []ProtoType{guessLong, guessLong, guessLong, guessLong},
	Ret:    guessLong,
	More:   true,
}

var guessLong = ProtoType{Kind: ProtoGuess, Size: 8}

// typedDefaults says whether a site that names no fetch gets its
// prototype's: a C function's start, probed as such. Go functions (their
// ABI passes strings in two registers, results in registers), offsets
// inside a function, bare addresses and USDT probes keep their own
// defaults.
func (s *Site) typedDefaults() bool {
	sp := s.Spec
	return len(sp.Fetches) == 0 && sp.Symbol != "" && sp.Offset == 0 && sp.Provider == "" &&
		!s.USDT && !s.GoFunc && s.ABI == ABISysV
}

func (s *Site) proto() *Prototype {
	if s.Proto != nil {
		return s.Proto
	}
	return &DefaultProto
}

// protoArgs is what an entry probe without fetches reports: each
// parameter of the prototype, typed, named by its DWARF name when known.
func (s *Site) protoArgs() []Fetch {
	p := s.proto()
	fs := make([]Fetch, 0, len(p.Params))
	for i, t := range p.Params[:s.firstOut()] {
		if i >= 6 {
			break // past the registers: the stack layout needs sizes we do not track
		}
		fs = append(fs, typedFetch(&Arg{N: i + 1}, t, s.paramName(i)))
	}
	return fs
}

// paramName is how a fetch of parameter i (0-based) is named: its DWARF
// name when known, else argN.
func (s *Site) paramName(i int) string {
	if i < len(s.Params) && s.Params[i] != "" {
		return s.Params[i]
	}
	return "arg" + strconv.Itoa(i+1)
}

// protoRet is what a return probe without fetches reports: the return
// value at its type (a void function reports FormatVoid), then the
// arguments from the first output argument on (outFetches).
func (s *Site) protoRet() []Fetch {
	t := s.proto().Ret
	t.LenArg = 0 // the arguments are gone at the return
	return append([]Fetch{typedFetch(BuiltinRet, t, "ret")}, s.outFetches()...)
}

// typedFetch reads x as t: truncated and extended to t's size and sign,
// or the string it points to, with the format that shows it.
func typedFetch(x Expr, t ProtoType, text string) Fetch {
	f := Fetch{Text: text, Enum: t.Enum}
	size := t.Size
	if size == 0 {
		size = 8
	}
	cast := func(signed bool) Expr {
		if size == 8 && !signed {
			return x
		}
		return &Cast{To: Type{Size: size, Signed: signed}, X: x}
	}
	switch t.Kind {
	case ProtoString:
		s := &StrOf{Addr: x}
		switch {
		case t.LenArg > 0 && t.LenArg <= 6:
			s.Len = &Arg{N: t.LenArg}
		case t.LenConst > 0:
			s.Len = &Const{Val: uint64(t.LenConst), T: U64}
		}
		f.Expr = s
		if t.CStr {
			f.Format = FormatCStr
		}
	case ProtoVoid:
		f.Expr, f.Format = &Const{Val: 0, T: U64}, FormatVoid
	case ProtoPointer:
		f.Expr, f.Format = x, FormatPointer
	case ProtoHex:
		f.Expr, f.Format = cast(false), FormatHex
	case ProtoGuess:
		f.Expr, f.Format = x, FormatGuess
	case ProtoBitvec:
		f.Expr, f.Format = cast(false), FormatBitvec
	case ProtoBitvecPtr:
		// Read as a buffer of its bytes: NULL shows as NULL, a bad
		// pointer as unreadable, on every engine, as a string's.
		f.Expr, f.Format = &StrOf{Addr: x, Len: &Const{Val: uint64(size), T: U64}}, FormatBitvec
	case ProtoOctal:
		f.Expr, f.Format = cast(false), FormatOctal
	case ProtoBool:
		f.Expr, f.Format = cast(false), FormatBool
	case ProtoChar:
		f.Expr, f.Format = cast(false), FormatChar
	default:
		f.Expr = cast(t.Signed)
	}
	return f
}
