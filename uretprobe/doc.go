// Package uretprobe is the return-probe planner both engines call:
//
//   - PlanReturn: the method (Strategy: hijack the return address, or probe
//     every RET for Go — whose runtime copies and walks stacks and dies on a
//     foreign return address, golang/go#22008 — with the CET shadow stack
//     on, or when an unwinder is linked: UsesUnwinder), the entry point
//     (GoEntry: after Go's stack-split prologue) and the RET sites
//     (RetSites, on x86.Rets: a decode error refuses the function);
//   - the refusals, wrapping ErrRefused: among them the functions no
//     return probe survives (NoReturnProbe: setjmp's second return, the
//     entry point's argc where a return address would be).
//
// How a plan is carried out belongs to each engine: the ptrace engine's
// shadow stacks, trampoline and unwinder breakpoints (package ptrace), the
// uprobe engine's uretprobes and BPF entry stamps (package uprobe).
package uretprobe
