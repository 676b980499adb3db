package probe

import (
	"context"
	"io"
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

	// PIDs attaches to running processes (attach mode) when Argv is empty.
	PIDs []int

	// Follow traces forked children too (-f).
	Follow bool

	// Resolve re-resolves the probes for a process image, used after exec
	// (and by the ptrace engine once the loader has mapped libraries).
	Resolve func(pid int) ([]Site, error)
}

// Result is what a finished trace reports.
type Result struct {
	// ExitCode is, in run mode, the command's exit status (128+sig when
	// killed), or -1 when ctx ended the trace first: the probes are gone
	// and the command runs on, untraced, never killed by the tracer.
	ExitCode int
	Lost     uint64 // events the engine could not deliver
}
