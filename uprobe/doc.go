// Package uprobe is utap's kernel backend: every probe site becomes a kernel
// uprobe (inode + file offset) running a BPF program generated at run time
// from the site's expression IR with cilium/ebpf's asm package, no clang.
//
// A program filters (condition evaluated in the kernel), fetches the
// site's values with bpf_probe_read_user(_str) and writes one fixed-layout
// record per hit into a BPF ring buffer; failed reservations are counted in
// a per-CPU map and reported as lost, never dropped silently.
package uprobe
