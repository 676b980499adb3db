//go:build linux && amd64

package ptrace

import (
	"encoding/binary"
	"slices"

	"golang.org/x/sys/unix"
)

// A seccomp filter (strace --seccomp-bpf) makes only the probed system
// calls stop: the others run at full speed. It goes into the command held
// at its exec, before its first instruction, by injected calls. A filter
// cannot be removed, and SECCOMP_RET_TRACE without a tracer fails the call
// with ENOSYS; so it is used only where the tracer stays to the end: run
// mode, every child followed (those not asked for with -f report nothing),
// and a trace stopped early keeps passing the calls through until the
// command exits (tr.shepherd) instead of detaching.

// useFilter reports whether a seccomp filter applies to this trace.
func (sy *sysTrace) useFilter() bool {
	return sy != nil && !sy.noFilter && len(sy.tr.target.Argv) > 0
}

// filtered reports whether the filter is in.
func (sy *sysTrace) filtered() bool { return sy != nil && sy.seccomp }

// installFilter puts the filter into p, held at its exec; on any failure
// the trace stops at every system call instead (PTRACE_SYSCALL).
func (sy *sysTrace) installFilter(p *process, th *thread) {
	tr := sy.tr
	prog := sy.gateFilter(p, th, sy.numbers())
	size := uint64(16 + 8*len(prog))
	addr, err := tr.inject(th, unix.SYS_MMAP, 0, size, unix.PROT_READ|unix.PROT_WRITE,
		unix.MAP_PRIVATE|unix.MAP_ANONYMOUS, ^uint64(0), 0)
	if err != nil {
		return
	}
	defer tr.inject(th, unix.SYS_MUNMAP, addr, size)
	// struct sock_fprog { u16 len; u64 filter; } then the instructions.
	b := make([]byte, size)
	binary.LittleEndian.PutUint16(b, uint16(len(prog)))
	binary.LittleEndian.PutUint64(b[8:], addr+16)
	for i, in := range prog {
		o := 16 + 8*i
		binary.LittleEndian.PutUint16(b[o:], in.Code)
		b[o+2], b[o+3] = in.Jt, in.Jf
		binary.LittleEndian.PutUint32(b[o+4:], in.K)
	}
	if p.mem.WriteAt(b, addr) != nil {
		return
	}
	if unix.Geteuid() != 0 {
		// Without CAP_SYS_ADMIN the kernel asks for no_new_privs.
		if _, err := tr.inject(th, unix.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return
		}
	}
	if _, err := tr.inject(th, unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, addr); err != nil {
		return
	}
	sy.seccomp = true
}

// numbers are the probed calls' numbers, sorted; nil for all of them.
func (st *sysTrace) numbers() []uint32 {
	if st.all {
		return nil
	}
	var nrs []uint32
	for nr := range st.byNr {
		nrs = append(nrs, uint32(nr))
	}
	slices.Sort(nrs)
	return nrs
}

// filterProgram is the classic BPF program: x86-64 calls whose number is
// in nrs (every one when nrs is nil) stop for the tracer; everything else
// runs. Each number takes a jeq and a ja, since a jeq's jump reaches 255
// instructions only.
func filterProgram(nrs []uint32) []unix.SockFilter {
	const (
		ld   = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq  = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		ja   = unix.BPF_JMP | unix.BPF_JA
		ret  = unix.BPF_RET | unix.BPF_K
		arch = 4 // offsetof(struct seccomp_data, arch)
	)
	prog := []unix.SockFilter{
		{Code: ld, K: arch},
		{Code: jeq, K: unix.AUDIT_ARCH_X86_64, Jt: 1},
		{Code: ret, K: unix.SECCOMP_RET_ALLOW},
	}
	if nrs == nil {
		return append(prog, unix.SockFilter{Code: ret, K: unix.SECCOMP_RET_TRACE})
	}
	prog = append(prog, unix.SockFilter{Code: ld, K: 0}) // nr
	n := len(nrs)
	for i, nr := range nrs {
		// After this pair, the rest: 2 per number left, then allow.
		toTrace := uint32(2*(n-i-1) + 1)
		prog = append(prog, unix.SockFilter{Code: jeq, K: nr, Jf: 1}, unix.SockFilter{Code: ja, K: toTrace})
	}
	return append(prog, unix.SockFilter{Code: ret, K: unix.SECCOMP_RET_ALLOW}, unix.SockFilter{Code: ret, K: unix.SECCOMP_RET_TRACE})
}
