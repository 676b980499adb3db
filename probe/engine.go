package probe

import (
	"context"
	"io"
	"syscall"
	"time"
)

// Engine is the thin contract between the CLI and a tracing backend. An
// engine compiles each Site's fetches and condition its own way, installs
// the probes, streams Events, and on return has removed every probe and
// detached, whatever ended the trace.
type Engine interface {
	Name() string
	// Trace launches or attaches per t, installs sites and calls emit for
	// every event (from one goroutine at a time) until the traced processes
	// have all exited or ctx is done. It returns when everything is removed.
	Trace(ctx context.Context, t Target, sites []Site, emit func(*Event)) (Result, error)
}

// Target says what to trace.
type Target struct {
	// Argv launches a command (run mode). Its stdio and exit status pass
	// through; it is held before exec until probes are in.
	Argv   []string
	Env    []string // nil: inherit
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Cred, when set, runs the command as that user and groups (strace
	// -u), the tracer staying root.
	Cred *syscall.Credential

	// PIDs attaches to running processes (attach mode) when Argv is empty.
	PIDs []int

	// Follow traces forked children too (-f).
	Follow bool

	// Tally asks for counts instead of events (utap -c, --count-only). An engine
	// able to count where the probes fire (in the kernel) emits nothing
	// and returns the counts in Result.Tallies; any other engine ignores
	// Tally and emits every event as usual.
	Tally bool

	// Borrow says emit keeps no pointer into an event once it returns
	// (the CLI writes or counts it at once): an engine may then reuse the
	// event's memory for the next, saving an allocation per event.
	Borrow bool

	// Pairs says emit takes an entry event carrying its call's return
	// (Event.Return): an engine that reads both from one buffer, one right
	// after the other, may then emit the call once, the cost of one event
	// saved per call. Without it, never.
	Pairs bool

	// Calls, when set, takes the calls an engine reads whole as plain
	// values (Call), without their events, where Calls.Takes says it
	// may; an engine not reading calls whole ignores it. Set only with
	// Pairs.
	Calls CallWriter

	// Lines, when set, is told of the batches of events an engine
	// emits from a buffer its probes write (Batcher): a writer that
	// writes each line as it comes (to a terminal) may write a batch's at
	// once.
	Lines Batcher

	// Aggregate lets an engine compute the aggregations of sites whose
	// Spec has an Agg where the probes fire: instead of an event per hit
	// it emits events of Kind "agg" (Event.Agg), partial aggregates the
	// CLI merges, with everything it holds before Trace returns and, when
	// AggEvery > 0, at least that often while it runs (--interval). An
	// engine that cannot for a site emits that site's events as usual.
	Aggregate bool
	AggEvery  time.Duration

	// StackDepth > 0 asks for the user stack of every event (-k,
	// --stack-depth): at most StackDepth return addresses in
	// Event.Stack, Addr only (the CLI symbolizes). The ptrace engine
	// unwinds with DWARF CFI (frame pointers where no FDE covers a pc);
	// so does the uprobe engine, on the registers and stack bytes its
	// records copy, unless StackFP asks for the kernel's frame-pointer
	// walk (bpf_get_stack: cheaper, but it stops early or strays in code
	// built without frame pointers).
	StackDepth int
	StackFP    bool

	// StrSize caps the bytes of a string or buffer a system call's
	// capture reads (strace's -s, plus one to tell truncation); 0 means
	// strace's default, 32.
	StrSize int
	// FdPaths (-y): an engine that reports a call after the fact (the
	// uprobe engine's records) reads the paths of the call's fds when it
	// decodes it, into Syscall.FdPaths, before the process can close them
	// or exit.
	FdPaths bool
	// ProcessEvents asks for the events strace shows between calls:
	// signals delivered (Kind "signal") and processes exiting ("exit").
	ProcessEvents bool

	// Resolve re-resolves the probes for a process image, used after exec
	// (and by the ptrace engine once the loader has mapped libraries).
	Resolve func(pid int) ([]Site, error)
}

// Config is what the CLI asks of whichever engine it picks.
type Config struct {
	// Info receives informational lines while tracing (for the ptrace
	// engine, that idle CPUs are asked to poll); nil drops them (-q).
	Info func(string)
	// SlowWakeups leaves idle CPUs halting even while ptrace stops come
	// fast (ptrace engine only).
	SlowWakeups bool
	// NoSeccomp traces system calls in run mode without a seccomp filter
	// (ptrace engine only): every call stops, and the trace can detach at
	// once when stopped early.
	NoSeccomp bool
	// NoPads keeps every probe a breakpoint (ptrace engine only): no
	// in-process pads.
	NoPads bool
	// Lossy lets a full in-process ring drop events, counted (ptrace
	// engine only), rather than make the calling thread wait.
	Lossy bool
	// Sync makes a thread wait after each in-process record until the
	// tracer has read it (ptrace engine only): the trace goes to the
	// terminal the program writes to, and a call's line must come before
	// what the program prints after it, as strace's and ltrace's do.
	Sync bool
	// Verbose receives a line per probe site saying how the engine placed
	// it (ptrace: an in-process pad, or a breakpoint and why); nil: none.
	Verbose func(string)
}

// Backend is one engine as the CLI picks it, for --backend.
type Backend struct {
	Name string
	// Available says why the engine cannot run on this machine or with
	// these privileges; nil: it can. Nil func: always available.
	Available func() error
	// Check reports the first site the engine refuses, before anything
	// starts, so that auto can pick another engine. Nil func: none.
	Check func(sites []Site) error
	New   func(Config) Engine
}

// Result is what a finished trace reports.
type Result struct {
	// ExitCode is, in run mode, the command's exit status (128+sig when
	// killed), or -1 when ctx ended the trace first: the probes are gone
	// and the command runs on, untraced, never killed by the tracer.
	ExitCode int
	Lost     uint64 // events the engine could not deliver
	// Notices say what else the trace could not show ("N returns not
	// seen ..."), a line each, for the CLI to print: engines print nothing.
	Notices []string

	// Tallies are the counts of a Tally trace, one per probe that fired;
	// nil when the engine emitted events instead.
	Tallies []Tally
}

// Tally is what an engine counted at one probe of a Tally trace: what
// summary.Summary would have made of the probe's events.
type Tally struct {
	Probe string // the spec's text, as Event.Probe
	Func  string // as Event.Func
	Kind  Kind
	Hits  uint64 // events: calls (entry) or returns
	// Return probes only: returns with a negative signed value, and the
	// durations of those whose entry was seen, as counts per bucket of
	// summary.Histogram's layout (summary.Bucket), with exact sum,
	// minimum and maximum.
	Errors      uint64
	Durations   map[int]uint64
	DurationSum uint64
	DurationMin uint64
	DurationMax uint64
}
