// Package pad is the ptrace engine's in-process probes: a site's int3
// replaced by a 5-byte jmp to a pad, code utap writes into the traced
// process that evaluates the probe's condition as native code, writes its
// record into a ring shared with the tracer, runs the displaced
// instructions and jumps back. No stop, no trap, no syscall per event.
//
// This package holds what a pad is: the ring's layout and the tracer's
// reader of it (ring.go), the pad's code (gen.go), and the clock that turns
// the pads' time-stamp counter readings into CLOCK_MONOTONIC (tsc.go).
// Where pads go and how they go in and out is the engine's (ptrace/pads.go);
// which instructions a jmp may displace is ssol's (ssol/pad.go).
package pad
