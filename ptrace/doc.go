// Package ptrace is the breakpoint engine: it seizes the traced threads,
// quiesces them while int3 bytes go in or out, and at each hit reports the
// probe and runs the displaced instruction by emulation or out of line
// from slots in an area it maps inside the tracee (see package ssol).
//
// Return probes, as uretprobe.PlanReturn plans them, hijack the return
// address at the function's entry for a
// trampoline int3 at offset 0 of that area, with a per-thread
// shadowStack (two stops per call); Go functions, and every
// function of a process running with the CET shadow stack, get a
// breakpoint on each RET instead (see ret.go). Unwinders get internal
// breakpoints that put hijacked return addresses back before they walk
// the stack; detaching and unfollowed forked children put them back too.
//
// Probes are refused in writable code and in rseq critical sections
// declared in __rseq_cs.
//
// Every ptrace request and every wait4 comes from one goroutine locked to
// its OS thread: the kernel ties a tracee to the tracer thread.
package ptrace
