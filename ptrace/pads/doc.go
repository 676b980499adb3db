// Package pads is the tracer's side of the in-process pads' rings: each
// traced process writes records into a ring shared with the tracer, and a
// Drainer turns them into events, in order with the loop's own, naming
// each record's thread by its fs base (owners.go) and a vfork child's
// records by their window (vfork.go).
//
// It knows nothing of ptrace: the engine maps the rings into the
// processes, tells it each thread's fs base as it sees it, and opens and
// closes vfork windows at the events. It imports no engine package.
package pads
