package probe

// Event is what every engine emits for one probe hit, in the JSON-lines
// schema documented in docs/output.md.
type Event struct {
	TimeNs     int64   `json:"time_ns"` // CLOCK_MONOTONIC (the clock of bpf_ktime_get_ns)
	PID        int     `json:"pid"`
	TID        int     `json:"tid"`
	Probe      string  `json:"probe"` // the spec's text
	Func       string  `json:"func"`
	Kind       string  `json:"kind"` // "entry" or "return"
	Args       []Value `json:"args"`
	Ret        *Value  `json:"ret"`         // return probes only
	DurationNs int64   `json:"duration_ns"` // return probes only; 0 when unknown
	// Stack is the user stack at the probe, innermost first, the probed
	// pc first (-k, Target.StackDepth); nil when not asked for.
	Stack []Frame `json:"stack,omitempty"`

	// Sys is a system call's raw material (Site.Syscall): Kind "entry" when
	// it is seen to start (an engine may skip it), "return" once it returns
	// or its thread leaves it for good (Returned false). internal/syscalls
	// decodes it; the JSON writer adds the decoded text.
	Sys *Syscall `json:"-"`
	// Signal (Kind "signal") is the raw 128-byte siginfo of a signal
	// delivered to the thread; Status (Kind "exit") a process's wait status.
	// Engines report both only when Target.ProcessEvents asks.
	Signal []byte `json:"-"`
	Status int    `json:"-"`

	// Caller is where the probed call returns to (ltrace -i), set by the
	// CLI with -i; 0 otherwise.
	Caller uint64 `json:"-"`

	// Agg (Kind "agg") is a partial aggregate an engine computed where
	// the probe fires (Target.Aggregate), for the CLI to merge into the
	// spec's map; a ustack key's stack is in Stack.
	Agg *AggDelta `json:"-"`

	ProbeIndex int `json:"-"` // index into the engine's probe list

	// Return, on an entry event, is its call's return when the engine
	// saw it come next from the same thread, nothing of the process in
	// between (Target.Pairs): the call in one emit. It stands for the
	// event after this one; Unpaired hands the two on one by one.
	Return *Event `json:"-"`
}

// Apart hands f the events ev stands for: ev, then its Return if it
// carries one, each alone (ev without its Return meanwhile, and as it
// came after: a stage after f may see the pair); it stops at f's first
// error.
func Apart(ev *Event, f func(*Event) error) error {
	r := ev.Return
	if r == nil {
		return f(ev)
	}
	ev.Return = nil
	err := f(ev)
	ev.Return = r
	if err != nil {
		return err
	}
	return f(r)
}

// Unpaired wraps emit, a consumer of single events, for an engine that
// may pair them (Target.Pairs): an entry and its Return go on as two
// events, in order, as if never paired.
func Unpaired(emit func(*Event)) func(*Event) {
	one := func(e *Event) error { emit(e); return nil }
	return func(ev *Event) { Apart(ev, one) }
}

// Syscall is one system call as an engine captured it.
type Syscall struct {
	Nr   int
	Args [6]uint64
	Ret  int64 // valid when Returned
	// Returned: the exit was seen (false for a call the thread never
	// returned from: exit_group, a trace ending while it blocks).
	Returned bool
	// Detached: not Returned because the trace ended (a detach) while
	// the call ran, which goes on untraced: strace's <detached ...>.
	Detached bool
	// Entry and Exit hold the tracee memory the call's decoder asks for
	// (syscalls.Info.Captures), index for index, read when the call
	// started and when it returned; a nil entry was not read (a fault, or
	// that side was not seen).
	Entry, Exit [][]byte
	// FdPaths (Target.FdPaths) holds the paths of the call's fds as the
	// engine read them from /proc ("" unknown); nil: the writer reads
	// /proc itself, which is right while the process is stopped in the call.
	FdPaths map[int]string
}

// Value is one fetched value. Exactly one of Int, Str or Err is meaningful.
type Value struct {
	Int   uint64
	Str   string
	IsStr bool
	Err   bool // the memory read faulted: shown as "?" / JSON null
	// Null: a string fetch (str()) whose address was 0, a NULL char*:
	// shown as NULL / JSON null, and an error return for -c.
	Null bool
	// Name is the value's name when its prototype's type is an
	// enumeration that names it (LC_ALL): text shows it, JSON the number.
	Name   string
	Format Format // how to show it
	Signed bool   // for FormatDefault integers
}
