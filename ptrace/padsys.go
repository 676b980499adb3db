//go:build linux && amd64

package ptrace

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/utap/utap/ptrace/pads"
	"github.com/utap/utap/ssol"
)

// System calls in-process (docs/syscalls.md). The traced process gets
// a gate: a region utap maps, mapped again at the same address after an
// exec. The `syscall` instructions of its objects whose number is static
// and probed get a pad in the gate (ssol.PlanSyscall, pad.BuildSys): the
// instructions before the `syscall` become a jmp to a stub next to the
// object, which jumps to the pad; the pad makes the call from the gate
// (no stop) and writes a record the drainer turns into the line. The
// original `syscall` stays in place, under a trap (padsystrap.go): a
// branch to it, a restart after a signal (padsyssig.go). A seccomp filter
// put in later lets the gate's calls through
// (seccomp_data.instruction_pointer: seccomp.go).

// gateSize is the gate's bytes: pads of about 1 KiB each.
const gateSize = 1 << 20

// sysGate is where the gate is, the same in every image of the trace
// (fork copies it; after an exec it is mapped again there).
type sysGate struct{ addr, size uint64 }

// holds says whether addr lies in the gate g (false for no gate).
func (g *sysGate) holds(addr uint64) bool { return g != nil && addr >= g.addr && addr < g.addr+g.size }

// sysPads is a process's system call pads (in padProc).
type sysPads struct {
	mapped  bool // the gate is mapped in this image
	off     bool // no more pads: the program installs a filter of its own
	next    uint64
	sites   map[uint64]*sysSite // by the pad's `syscall` address
	traps   map[uint64]*sysTrap // by the original `syscall` (padsystrap.go)
	trapped bool                // trap mode: every object's traps are in
	watches uint64              // trap mode: the watch pads' tables in the gate (pad.WatchTable), 0 until written
	scanned map[object]bool
}

// sysSite is one `syscall` instruction that jumps to its pad.
type sysSite struct {
	first  uint64 // the first displaced instruction: the jmp
	sc     uint64 // the original `syscall`
	pad    uint64 // the pad's `syscall`
	nr     int
	orig   []byte
	stub   uint64
	padAt  uint64
	padLen int
	// branches: a conditional branch among the displaced instructions
	// may take the thread out of the pad before its `syscall`.
	branches bool
	disp     *ssol.Displaced // the displaced instructions, at padAt
	tsc      uint64          // the pad's code taking the TSC before its `syscall` (a dispatch pad's comparisons)
	id       uint32          // its pad's id (pad.SetFaulted)
	// dispatch: a dispatch pad (pad.BuildDispatch), of a number not set
	// before the `syscall` (nr -1), or a watch pad (pad.BuildWatch, nr
	// the call's): it writes no record.
	dispatch bool
}

func (sp *sysPads) forked() *sysPads {
	if sp == nil {
		return nil
	}
	n := *sp
	return &n // the sites are shared: the same addresses in the copy
}

// gateProgram inserts, after filterProgram's architecture check (its
// first three instructions), an ALLOW for calls made from [addr,
// addr+size), which lies within one 4 GiB half.
func gateProgram(prog []unix.SockFilter, addr, size uint64) []unix.SockFilter {
	const (
		ld  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		ret = unix.BPF_RET | unix.BPF_K
		ip  = 8 // offsetof(struct seccomp_data, instruction_pointer)
	)
	lo := uint32(addr)
	gate := []unix.SockFilter{
		{Code: ld, K: ip + 4},
		{Code: jeq, K: uint32(addr >> 32), Jf: 4},
		{Code: ld, K: ip},
		{Code: jge, K: lo, Jf: 2},
		{Code: jge, K: lo + uint32(size), Jt: 1},
		{Code: ret, K: unix.SECCOMP_RET_ALLOW},
	}
	out := append([]unix.SockFilter(nil), prog[:3]...)
	out = append(out, gate...)
	return append(out, prog[3:]...)
}

// sysPadsOf readies p's system call pads: its ring, and the gate mapped
// in this image (again after an exec, at the same address); nil when p
// cannot have any.
func (pd *padEngine) sysPadsOf(p *process, th *thread) *sysPads {
	tr := pd.tr
	sy := tr.sys
	if sy == nil || !sy.trapMode || pd.off || !p.report || p.shared != nil {
		return nil
	}
	if p.pads == nil {
		p.pads = &padProc{sites: map[uint64]*padSite{}, fs: pads.Owners{}}
	}
	if p.pads.sys == nil {
		p.pads.sys = &sysPads{sites: map[uint64]*sysSite{}, scanned: map[object]bool{}}
	}
	sp := p.pads.sys
	if sp.off {
		return nil
	}
	if !sp.mapped {
		ours := 0
		if p.filtered {
			ours = 1
		}
		if n := seccompFilters(p.pid); n != ours {
			// Not only ours: a filter of the program's own may refuse
			// the pads' reads (padsysfilter.go).
			sp.off = true
			pd.say(fmt.Sprintf("pid %d: system calls stop: %d seccomp filters, not only utap's", p.pid, n))
			return nil
		}
		if sy.gate == nil {
			// The first process: anywhere (a filter compares the low
			// halves only: lateFilter checks).
			addr, err := mapGate(tr, th, 0)
			if err != nil {
				sp.off = true
				pd.say(fmt.Sprintf("pid %d: system calls stop: no gate for in-process calls (%v)", p.pid, err))
				return nil
			}
			sy.gate = &sysGate{addr: addr, size: gateSize}
		} else if !gateMapped(p.pid, sy.gate) {
			g := sy.gate
			addr, err := mapGate(tr, th, g.addr)
			if err != nil || addr != g.addr {
				pd.say(fmt.Sprintf("pid %d: the gate for in-process system calls cannot be mapped at %#x again: its calls stop", p.pid, g.addr))
				return nil
			}
		}
		sp.mapped = true
		// Left with the trace, as the pad areas.
		p.pads.areas = append(p.pads.areas, area{start: sy.gate.addr, size: sy.gate.size})
	}
	if p.pads.ring == nil {
		r, err := pd.newRing(p, th, 0)
		if err != nil {
			pd.say(fmt.Sprintf("pid %d: system calls stop: %v", p.pid, err))
			return nil
		}
		p.pads.ring = r
		pd.fsAll(p)
	}
	return sp
}

// mapGate maps a gate of gateSize bytes in th's process, r-x: at `at`
// if not 0 (where nothing is mapped), else where the kernel puts it.
func mapGate(tr *tracer, th *thread, at uint64) (uint64, error) {
	flags := uint64(unix.MAP_PRIVATE | unix.MAP_ANONYMOUS)
	if at != 0 {
		flags |= unix.MAP_FIXED_NOREPLACE
	}
	return tr.inject(th, unix.SYS_MMAP, at, gateSize, unix.PROT_READ|unix.PROT_EXEC, flags, ^uint64(0), 0)
}

// gateMapped says whether p has the gate mapped (fork copied it).
func gateMapped(pid int, g *sysGate) bool {
	ms, err := readMaps(pid)
	if err != nil {
		return false
	}
	for _, m := range ms {
		if m.Start == g.addr && m.End == g.addr+g.size {
			return true
		}
	}
	return false
}

// placeSys gives the probed system calls of p's objects (those in only,
// nil: every one mapped) their pads; p's threads are all stopped.
func (pd *padEngine) placeSys(p *process, th *thread, only map[object]bool) {
	sy := pd.tr.sys
	sp := pd.sysPadsOf(p, th)
	if sp == nil {
		return
	}
	ms, err := readMaps(p.pid)
	if err != nil {
		return
	}
	if _, ok := sy.dispatchNrs(); only == nil && !ok && goProgram(p.pid) {
		sysTraps{pd.tr}.off(p, th, "a Go program makes its calls through the `syscall` of its runtime whose number is in a "+
			"register: with every call (or more than 64) probed, trapped there each would cost more than the stops")
		return
	}
	sc := sysScan{pd: pd, p: p, th: th, sp: sp, rips: stoppedRips(p)}
	for _, m := range ms {
		o := object{path: m.Path, inode: m.Inode}
		if !m.Exec() || sp.scanned[o] || only != nil && !only[o] {
			continue
		}
		why := ""
		switch {
		case m.Path == "[vdso]" && only == nil:
			why = sc.vdso(m)
		case only == nil && anonCode(p, m):
			why = fmt.Sprintf("code at %#x in memory no file backs (written at run time)", m.Start)
		case len(m.Path) == 0 || m.Path[0] != '/':
			continue
		default:
			why = sc.object(o, ms)
		}
		sp.scanned[o] = true
		if why != "" {
			sysTraps{pd.tr}.off(p, th, why)
			return
		}
	}
	if only == nil {
		sp.trapped = true
	}
}

// padRing is the ring p's pads write to.
func (p *process) padRing() (addr uint64, n int) { return p.pads.ring.Addr, p.pads.ring.N }
