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

	ProbeIndex int `json:"-"` // index into the engine's probe list
}

// Value is one fetched value. Exactly one of Int, Str or Err is meaningful.
type Value struct {
	Int    uint64
	Str    string
	IsStr  bool
	Err    bool   // the memory read faulted: shown as "?" / JSON null
	Format Format // how to show it
	Signed bool   // for FormatDefault integers
}
