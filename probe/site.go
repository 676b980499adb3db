package probe

// ABI says where a function's integer arguments and return value live.
type ABI uint8

const (
	// ABISysV is the C calling convention: rdi rsi rdx rcx r8 r9, then the
	// stack from rsp+8 at entry; return value in rax.
	ABISysV ABI = iota
	// ABIGoRegs is Go's register ABI (ABIInternal, go1.17+): rax rbx rcx rdi
	// rsi r8 r9 r10 r11; return value in rax.
	ABIGoRegs
)

// Site is one resolved place a probe fires at: a Spec matched to one
// function (or address) of one ELF object. Addresses are link-time; an
// engine adds the object's load bias from /proc/PID/maps (ptrace) or uses
// FileOffset directly (kernel uprobes key on inode + offset).
type Site struct {
	Spec  *Spec
	Probe int // index of Spec in the list the user gave; events name it

	Object     string // absolute path of the ELF file
	Func       string // symbol name ("" for a bare address)
	FuncAddr   uint64 // link-time address of the function start
	FuncSize   uint64 // 0 when unknown
	Addr       uint64 // link-time address of the probed instruction
	FileOffset uint64 // file offset of the probed instruction
	Insn       []byte // the instruction's bytes, decoded at resolve time

	ABI    ABI
	GoFunc bool // from a Go binary: never hijack its return addresses
	// IFunc: Func is an IFUNC and this is its resolver, which runs once at
	// load time; the implementation the loader picks is known only in the
	// running process (resolve again with its PID once it is relocated).
	IFunc  bool
	Params []string // parameter names in argument order, from DWARF (may be nil)
	// Proto is the function's signature when known (DWARF, else ltrace's
	// prototype files): Bind makes it the fetches of a probe naming none.
	Proto *Prototype
	// USDT: the site is a static probe (a .note.stapsdt note). Args are its
	// operands as expressions (Reg, Deref, Cast to the operand's size and
	// sign), which Bind puts in place of argN. Semaphore is the link-time
	// address of its 2-byte semaphore, SemaphoreOffset its file offset (0:
	// none); engines increment it while the probe is in (the uprobe engine
	// through the kernel's reference counter), so the program's guarded
	// code runs.
	USDT            bool
	Args            []Expr
	Semaphore       uint64
	SemaphoreOffset uint64
	// Operands are the note's operand texts ("-4@112(%rsp)"), one per Args
	// entry. An operand utap cannot read has a nil Args entry and its
	// reason in ArgErrs: the probe still resolves, and only a spec that
	// uses that argN fails to bind.
	Operands []string
	ArgErrs  []error
	// Syscall: the site is system call number SyscallNr (a Spec with
	// Syscall set), not a place in code: Func is the call's name, Params
	// its argument names, and Object, addresses and Insn are empty.
	Syscall   bool
	SyscallNr int
	// Fetches and Cond are the Spec's, bound to this site by Bind: parameter
	// names resolved to arguments. Engines compile these, not the Spec's.
	Fetches []Fetch
	Cond    Expr
}
