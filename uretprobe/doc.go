// Package uretprobe holds what both engines share for return probes:
//
//   - Strategy: hijack the return address (C) or probe every RET (Go, whose
//     runtime copies and walks stacks and dies on a foreign return address,
//     golang/go#22008; or when the CET shadow stack is on);
//   - RetSites: the RET instructions of a function, decoded forward from its
//     start (a decode error refuses the function, never skips a byte);
//   - ShadowStack: the ptrace engine's per-thread record of hijacked return
//     addresses, after the kernel's kernel/events/uprobes.c;
//   - Calls: entry/RET pairing for durations when return addresses are not
//     hijacked.
//
// Nothing here makes a ptrace or bpf call: tracee memory is reached through
// the Memory interface the engine implements.
package uretprobe
