// Package ptrace is the breakpoint engine: it seizes the traced threads,
// quiesces them while int3 bytes go in or out, and at each hit reports the
// probe and runs the displaced instruction by emulation or out of line
// from slots in an area it maps inside the tracee (see package ssol).
//
// Every ptrace request and every wait4 comes from one goroutine locked to
// its OS thread: the kernel ties a tracee to the tracer thread.
package ptrace
