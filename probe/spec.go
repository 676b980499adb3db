package probe

// Kind says where in a function a probe fires.
type Kind uint8

const (
	// Entry fires before the probed instruction executes (function entry,
	// or an offset/address inside it).
	Entry Kind = iota
	// Return fires when the probed function returns to its caller.
	Return
)

func (k Kind) String() string {
	if k == Return {
		return "return"
	}
	return "entry"
}

// Spec is one parsed probe: where it fires, what it fetches and when.
// It is backend-neutral; each engine compiles Fetches and Cond its own way.
type Spec struct {
	Text string // the spec as the user wrote it
	Kind Kind

	// Object names the ELF object: "" for the traced executable, a path,
	// or a library short name ("libc" matches libc.so.6).
	Object string
	// Symbol is a function name or a glob (*, ?, [...]); "" when Address is set.
	// A "@plt" suffix names the PLT stub of that function.
	Symbol string
	// Offset is added to the symbol's address (work+0x4).
	Offset uint64
	// Address is a link-time virtual address in Object (0xADDRESS form),
	// used when Symbol is "".
	Address uint64

	// Provider, when set, makes this a USDT probe (usdt:[object:]provider:name):
	// Symbol is then the probe's name (or a glob); both are globs.
	Provider string

	// Syscall makes this a system call probe (syscall:PATTERN): Symbol is
	// a name, a glob or a %class. It fires once per call, when it returns
	// (Kind is Return, so conditions may use ret as well as the arguments).
	Syscall bool

	Fetches []Fetch
	Cond    Expr // nil: always fires

	// Optional: matching no function is a note, not an error (the names
	// of ltrace's filters: ltrace skips those a program lacks).
	Optional bool

	// Twinned marks an entry probe and the return probe the CLI added
	// beside it to show each call as one line: a prototype's output
	// arguments are shown by the return (entryarg.go), not the entry.
	Twinned bool

	// Agg, when set, makes the spec an aggregation (spec => count() by
	// ustack): its Fetches are the aggregated value and keys, and its
	// events feed a map rather than being shown.
	Agg *Agg
}

// Fetch is one value the probe reports, with its display format.
type Fetch struct {
	Expr   Expr
	Format Format
	Text   string // source text of the fetch, for headers and errors
	// Enum names its values, from a prototype's enumeration; the
	// engines leave it to the CLI, which sets Value.Name from it.
	Enum Enum
}

// Format is how a fetched value is shown.
type Format byte

const (
	FormatDefault  Format = 0   // d for integers, s for str()
	FormatDec      Format = 'd' // signed decimal
	FormatUnsigned Format = 'u'
	FormatHex      Format = 'x'
	FormatString   Format = 's' // NUL-terminated string read from the tracee
	FormatPointer  Format = 'p'
	// Formats only prototypes give (probe/proto.go), not the spec syntax.
	FormatOctal Format = 'o' // octal, as ltrace shows a mode
	FormatBool  Format = 'b' // false / true
	FormatChar  Format = 'c' // a character, quoted 'c'
	FormatVoid  Format = 'v' // a void function's return: <void> / JSON null
	FormatGuess Format = 'g' // a value of unknown type, as ltrace shows one: decimal within ±10000, else hex
	FormatCStr  Format = 'z' // a sized string shown up to its first NUL, as ltrace shows string[N] and stringN
	// FormatBitvec: a bit set, an integer's bits or a buffer's (little
	// endian), as ltrace shows one: <1,12>, ~<31-32> when most are set.
	FormatBitvec Format = 'B'
)
