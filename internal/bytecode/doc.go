// Package bytecode compiles probe conditions and fetches to a compact
// register bytecode that the ptrace engine evaluates at every hit.
//
// The idea is GDB's conditional tracepoints: an expression is compiled once,
// when the probe goes in, and never re-parsed or re-typed per hit. Where GDB's
// stack bytecode spent most of its time on redundant extends and push/pop
// pairs, this compiler works on registers, chooses signed or unsigned
// operations and extends at compile time from the IR's static types, folds
// constants with probe.Eval itself, and emits immediate forms, so that
// `2*arg1 + 3*arg2 > 0` is four arithmetic instructions after the argument loads.
//
// The semantics are those of probe.Eval (docs/spec.md), which the tests
// check this package against on random expressions, and against the eBPF
// the uprobe engine generates for the same IR.
package bytecode
