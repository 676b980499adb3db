// Package ssol analyses x86-64 instructions for single-stepping out of line:
// it decides, for each probed instruction, whether the ptrace engine
// emulates it at the breakpoint stop, runs a relocated copy from a slot in
// the tracee followed by a jump back (boost), runs the copy followed by an
// int3 (step), or refuses it. It makes no ptrace calls: everything here is
// pure and unit-testable.
package ssol
