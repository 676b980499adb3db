// Package uprobe is utap's kernel backend: every probe site becomes a kernel
// uprobe (inode + file offset) running a BPF program generated at run time
// from the site's expression IR with cilium/ebpf's asm package, no clang.
//
// A program filters (condition evaluated in the kernel), fetches the
// site's values and writes one fixed-layout record per hit into a BPF ring
// buffer; failed reservations are counted in a per-CPU map and reported as
// lost, never dropped silently. Programs are sleepable where the kernel
// allows it, so reads fault pages in (bpf_copy_from_user and the
// bpf_copy_from_user_str kfunc) and fail only where the tracee's own read
// would; without, they fall back to bpf_probe_read_user.
//
// Return probes are kernel uretprobes for C, and uprobes on every RET for
// Go (whose runtime dies on a hijacked return address) or with
// Engine.RetProbes. A hidden entry probe stamps each call's entry time for
// the return's duration. A return probe's fetches are evaluated at the
// return, as in bpftrace: ret is rax, and argN reads the argument
// registers as they are then, which the function has usually overwritten.
//
// A traced process that execs (-f or not) is held at its exec until the
// probes of its new image are in, so none of its calls is missed: a
// launched command's processes, and attached ones, by a ptrace seize for
// exec and fork events only, which no parent sees (hold.go,
// holdattach.go); an attached one ptrace cannot seize by a SIGSTOP its
// parent can see (exec.go).
package uprobe
