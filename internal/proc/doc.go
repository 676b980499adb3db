// Package proc is utap's one home for the traced process, used by both
// engines: starting a command held at its exec, attaching to threads,
// ptrace requests and waits, reading and writing its memory, running an
// injected system call in it, and what /proc says of it (the maps, the
// one rule for "this mapping is that file", the load bias, auxv, the
// loader's rendezvous).
//
// It knows nothing of probes: the ptrace engine interprets stops for its
// breakpoints, the uprobe engine only holds a command until its probes are
// in. ptrace requests must come from the thread that is the tracer, so
// callers run them from one goroutine locked to its OS thread.
package proc
