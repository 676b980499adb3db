//go:build linux && amd64

package ptrace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/utap/utap/internal/rescue"
	"slices"

	"golang.org/x/sys/unix"
)

// A seccomp filter (strace --seccomp-bpf) makes only the probed system
// calls stop: the others run at full speed. A filter cannot be removed,
// and SECCOMP_RET_TRACE without a tracer fails the call with ENOSYS; so
// it is used only where the tracer stays to the end: run mode, every
// child of a filtered process followed (those not asked for with -f
// report nothing), and a trace stopped early keeps passing the calls
// through until the command exits (tr.shepherd) instead of detaching.
//
// Pads and traps (padsystrap.go) cost a probed call less than the filter
// costs every call, so a run-mode command gets the filter only where the
// traps cannot see all its calls: at its exec when it can have no pads
// (--no-pads, -k, a CPU without rdfsbase); later, in the process
// that writes code at run time or whose traps go out (lateFilter), by
// calls injected in a trapped thread. --no-seccomp never uses one.

// mayFilter reports whether this trace may use the filter: run mode,
// without --no-seccomp.
func (sy *sysTrace) mayFilter() bool {
	return sy != nil && !sy.noFilter && len(sy.tr.target.Argv) > 0
}

// useFilter reports whether the command gets the filter at its exec.
func (sy *sysTrace) useFilter() bool { return sy.mayFilter() && !sy.trapMode }

// filterLater reports whether a process of this trace may get the filter
// once it runs, with its pads and traps (lateFilter).
func (sy *sysTrace) filterLater() bool { return sy.mayFilter() && sy.trapMode }

// filtered reports whether the filter is in some traced process.
func (sy *sysTrace) filtered() bool {
	if sy == nil {
		return false
	}
	for _, p := range sy.tr.procs {
		if p.filtered {
			return true
		}
	}
	return false
}

// installFilter puts the filter into p, held at its exec; on any failure
// the trace stops at every system call instead (PTRACE_SYSCALL).
func (sy *sysTrace) installFilter(p *process, th *thread) {
	sy.loadFilter(p, th, filterProgram(sy.numbers()), 0)
}

// lateFilter puts the filter into p, running, its threads stopped and th
// at a trap: every thread's calls from outside the gate (code written at
// run time, sites whose traps went out) stop when probed; the gate's
// pads and trampolines keep running free. The calls that install a
// filter stop too (padsysfilter.go). It fails where the filter cannot
// tell the gate by the low half of an address.
func (sy *sysTrace) lateFilter(p *process, th *thread) error {
	g := sy.gate
	if g == nil || g.addr>>32 != (g.addr+g.size-1)>>32 {
		return errors.New("the gate crosses a 4 GiB line")
	}
	nrs := sy.numbers()
	if nrs != nil {
		nrs = append(nrs, unix.SYS_SECCOMP, unix.SYS_PRCTL)
		slices.Sort(nrs)
		nrs = slices.Compact(nrs)
	}
	return sy.loadFilter(p, th, gateProgram(filterProgram(nrs), g.addr, g.size), unix.SECCOMP_FILTER_FLAG_TSYNC)
}

// loadFilter loads prog into p by calls injected in th, with flags
// (SECCOMP_FILTER_FLAG_TSYNC: for every thread, not th's alone).
func (sy *sysTrace) loadFilter(p *process, th *thread, prog []unix.SockFilter, flags uint64) error {
	tr := sy.tr
	size := uint64(16 + 8*len(prog))
	addr, err := tr.inject(th, unix.SYS_MMAP, 0, size, unix.PROT_READ|unix.PROT_WRITE,
		unix.MAP_PRIVATE|unix.MAP_ANONYMOUS, ^uint64(0), 0)
	if err != nil {
		return err
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
	if err := p.mem.WriteAt(b, addr); err != nil {
		return err
	}
	if unix.Geteuid() != 0 {
		// Without CAP_SYS_ADMIN the kernel asks for no_new_privs.
		if _, err := tr.inject(th, unix.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return err
		}
	}
	r, err := tr.inject(th, unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, addr)
	if err != nil {
		return err
	}
	if r != 0 {
		// TSYNC: thread r could not take it (another filter's ancestry).
		return fmt.Errorf("thread %d cannot take the filter", r)
	}
	p.filtered = true
	rescue.Filtered(p.pid) // its probed calls need a tracer from now on
	return nil
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
