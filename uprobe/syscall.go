//go:build linux && amd64

package uprobe

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/utap/utap/internal/syscalls"
	"github.com/utap/utap/probe"
)

// System call tracing (Site.Syscall). Two programs on the
// raw_syscalls:sys_enter and sys_exit tracepoints serve every traced call:
// the calls are data (an array indexed by number says which site a call
// is, and which of its memory to read), not code, so tracing %file or
// every call costs two programs, not hundreds.
//
// sys_enter filters on the number, then on the tgid map, builds the call's
// record in a per-CPU scratch value (header, arguments, entry captures)
// and keeps it per thread in a hash; sys_exit takes it back, adds the
// return value and duration, evaluates the condition (compiled by the
// expression generator: the record is laid out so that arguments and ret
// sit where struct pt_regs keeps rdi rsi rdx rcx r8 r9 and rax), reads the
// exit captures and sends the whole record to the ring: one per call. A
// call that does not return (Info.NoReturn) is sent at entry, its
// condition seeing ret as 0; a failed execve's exit is dropped.
//
// Classic tracepoints rather than tp_btf or raw ones: their context holds
// the number, arguments and return value at fixed offsets, so the program
// needs no pointer chasing into pt_regs and no BTF, and every kernel with
// BPF ring buffers has them.
//
// Entry captures are read at sys_enter, before the call can change or
// unmap the memory. These programs cannot sleep, so a read of a page the
// tracee has not touched yet (a path in .rodata) fails there; sys_exit
// reads a failed string or buffer capture of the entry again, by when the
// kernel has faulted it in for the call itself.

// Layout of a call's record: the per-thread value and the ring record are
// the same bytes.
//
//	0   u64 sysTag | site index
//	8   u64 tgid<<32 | tid
//	16  u64 entry time (bpf_ktime_get_ns)
//	24  u64 duration in ns
//	32  u64 system call number
//	40  u64 flags: sysReturned
//	64  u64 arg6 (pt_regs r9)    72 arg5 (r8)   80 ret (rax)
//	88  u64 arg4 (rcx)           96 arg3 (rdx)  104 arg2 (rsi)  112 arg1 (rdi)
//	128 capture slots: s64 result, then the bytes (see sysCap)
const (
	sysOffSite    = 0
	sysOffPidTgid = 8
	sysOffTime    = 16
	sysOffDur     = 24
	sysOffNr      = 32
	sysOffFlags   = 40
	sysOffSP      = 48 // pt_regs' r11 slot, free: an SP capture's address
	sysOffCaps    = 128
	sysReturned   = 1
	sysTag        = uint64(1) << 63 // tells a call's record from a probe's
	sysMaxNr      = 512             // x32 calls (bit 30) are not traced
	sysMaxCaps    = 10              // captures read (pselect6 has 10); later ones read after the fact
	sysMaxCapture = 8192            // bytes read of one capture at most (see newSysSpec)
	sysMaxValue   = 32 << 10        // a per-CPU value's bytes at most (the build map)
	sysNotRead    = -61             // -ENODATA: a capture's result before it is read
	sysMaxOpen    = 1 << 14         // threads inside a traced call at once
)

// sysArgOff is where argument i (0-based) lives in a record.
var sysArgOff = [6]int16{regDI, regSI, regDX, regCX, regR8, regR9}

// capKind is how a capture is read.
type capKind uint8

const (
	capStr capKind = iota + 1
	capStrArray
	capBytes
	capNone     // never read: its entry stays nil
	capIov      // an iovec array (syscall_caps.go)
	capStrCount // an array of which only the count is shown
)

// sysCap is one capture of internal/syscalls, as the kernel reads it.
type sysCap struct {
	arg    int // 0-based argument holding the address
	exit   bool
	kind   capKind
	size   int  // capBytes: a fixed length (when lenArg < 0 and !lenRet)
	lenArg int  // capBytes: the argument giving the length, -1 none
	lenRet bool // capBytes: the return value gives the length
	max    int  // bytes at most (capStrArray: all strings, joined)
	elem   int  // capBytes: the length counts elements of elem bytes
	// indirect: the address is the pointer found at the argument's
	// (syscalls.Capture.Indirect at offset 0, an entry's: pselect6's sigset).
	indirect bool
	left     bool // capIov: the return value bounds the bytes (readv)
	// spOff >= 0: the address is the stack pointer at entry plus spOff
	// (syscalls.Capture.SP), kept in the record at sysOffSP; -1 otherwise.
	spOff int
	// user: the kernel reads nothing (kind capNone); the capture is read
	// from user space as the record is decoded (a msghdr, whose pointers
	// go three levels deep).
	user bool
}

// sysInfo is what the engine needs of a system call.
type sysInfo struct {
	noReturn bool
	caps     []sysCap
}

// sysCall is one traced call number: its site and record layout.
type sysCall struct {
	nr   int
	site int // index in sysSpec.sites
	info sysInfo
	offs []int // record offset of each capture's slot
	size int   // record bytes
	cond int   // condition number, 0: none
}

// sysSpec is the system call side of a Spec.
type sysSpec struct {
	sites  []probe.Site
	calls  map[int]*sysCall          // by number
	conds  []probe.Expr              // condition i+1
	arrLim int                       // bytes of a string array read (all its strings)
	room   int                       // the largest capture slot
	value  int                       // bytes of a record's buffer: the largest record plus room
	enter  map[int]*ebpf.ProgramSpec // by the arguments it reads (arities)
	exit   *ebpf.ProgramSpec
	confs  *ebpf.MapSpec // array by number of sysConf
	open   *ebpf.MapSpec // hash: pid_tgid → record of a call in progress
	build  *ebpf.MapSpec // per-CPU array of one record being built
	strLen int           // -s
	capLim int           // bytes of a string or buffer captured at most (newSysSpec)
	stack  stackConf     // -k (syscall_stack.go)
}

// Names of the system call maps.
const (
	mapSysConf  = "utap_sysconf"
	mapSysOpen  = "utap_sysopen"
	mapSysBuild = "utap_sysbuild"
)

// ErrSyscall wraps what a system call probe cannot do in this engine.
var ErrSyscall = errors.New("system call probe")

// splitSyscalls separates the system call sites from the probe sites.
func splitSyscalls(sites []probe.Site) (probes, calls []probe.Site) {
	for _, s := range sites {
		if s.Syscall {
			calls = append(calls, s)
		} else {
			probes = append(probes, s)
		}
	}
	return probes, calls
}

// newSysSpec lays out the records and generates the two programs.
func newSysSpec(sites []probe.Site, strsize int, m maps, v4 bool, stk stackConf) (*sysSpec, error) {
	if strsize <= 0 {
		strsize = syscalls.DefaultStrSize
	}
	// The largest cap that lets every record be built in one per-CPU
	// value: paths (4096) whole where it can.
	for lim := sysMaxCapture; ; lim /= 2 {
		ss, err := layoutSys(sites, strsize, lim)
		if err != nil {
			return nil, err
		}
		if ss.value <= sysMaxValue {
			ss.stack = stk
			return ss.generate(m, v4)
		}
		if lim <= 256 {
			return nil, fmt.Errorf("%w: records of %d bytes do not fit a per-CPU value", ErrSyscall, ss.value)
		}
	}
}

// checkSysOverlap refuses two specs selecting one call when either has a
// condition or fetches of its own: that would need a second event, which
// the programs do not make. Plain selections overlapping (%file and
// openat) show the call once, as on the ptrace engine.
func checkSysOverlap(sites []probe.Site) error {
	first := map[int]*probe.Site{}
	for i := range sites {
		s := &sites[i]
		if !s.Syscall {
			continue
		}
		f, dup := first[s.SyscallNr]
		if !dup {
			first[s.SyscallNr] = s
			continue
		}
		if !syscalls.Plain(f) || !syscalls.Plain(s) {
			return fmt.Errorf("%w: %s and %s both select %s: the uprobe engine traces a call for one spec only; use --backend ptrace",
				ErrSyscall, f.Spec.Text, s.Spec.Text, s.Func)
		}
	}
	return nil
}

// capNote says, when -s (or a dump's capture) asks for more than the
// records hold, where strings and buffers are cut: nothing cut silently.
func (ss *sysSpec) capNote() string {
	if ss == nil || ss.strLen < ss.capLim {
		return ""
	}
	return fmt.Sprintf("system calls' strings and buffers are captured up to %d bytes on this engine (%d asked): "+
		"--backend ptrace captures all", ss.capLim, ss.strLen)
}

// layoutSys lays out the records with each capture capped at limit bytes.
func layoutSys(sites []probe.Site, strsize, limit int) (*sysSpec, error) {
	if err := checkSysOverlap(sites); err != nil {
		return nil, err
	}
	ss := &sysSpec{sites: sites, calls: map[int]*sysCall{}, strLen: strsize, capLim: limit}
	conds := map[string]int{}
	for i := range sites {
		s := &sites[i]
		nr := s.SyscallNr
		if nr < 0 || nr >= sysMaxNr {
			return nil, fmt.Errorf("%w %s: number %d out of range", ErrSyscall, s.Spec.Text, nr)
		}
		if _, dup := ss.calls[nr]; dup {
			continue // plain selections overlapping: the call shows once (checkSysOverlap)
		}
		info, ok := sysLookup(nr, strsize)
		if !ok {
			return nil, fmt.Errorf("%w %s: unknown system call %d", ErrSyscall, s.Spec.Text, nr)
		}
		for _, cp := range info.caps {
			if cp.arg < 0 || cp.arg > 5 || cp.lenArg > 5 || cp.kind == 0 || cp.max < 0 {
				return nil, fmt.Errorf("%w %s: bad capture %+v", ErrSyscall, s.Spec.Text, cp)
			}
		}
		for j := range info.caps {
			// A per-CPU value holds 32 KiB at most (the record is built in one).
			switch cp := &info.caps[j]; cp.kind {
			case capStrArray:
				cp.max = min(cp.max, limit)
				ss.arrLim = max(ss.arrLim, cp.max)
			case capStr, capBytes:
				cp.max = min(cp.max, limit)
			}
		}
		c := &sysCall{nr: nr, site: i, info: info, size: sysOffCaps}
		for _, cp := range info.caps {
			c.offs = append(c.offs, c.size)
			n := ss.slotSize(cp)
			c.size += n
			ss.room = max(ss.room, n)
		}
		if s.Cond != nil {
			key := s.Cond.String()
			if conds[key] == 0 {
				ss.conds = append(ss.conds, s.Cond)
				conds[key] = len(ss.conds)
			}
			c.cond = conds[key]
		}
		ss.value = max(ss.value, c.size)
		ss.calls[nr] = c
	}
	ss.room = max(ss.room, 16, 8+2*align8(ss.arrLim+1)) // readStrArray's bounds
	ss.value += ss.room
	ss.value = align8(ss.value)
	return ss, nil
}

// generate makes the maps' specs and the two programs.
func (ss *sysSpec) generate(m maps, v4 bool) (*sysSpec, error) {
	ss.confs = &ebpf.MapSpec{Name: mapSysConf, Type: ebpf.Array, KeySize: 4, ValueSize: sysConfSize, MaxEntries: sysMaxNr}
	ss.open = &ebpf.MapSpec{Name: mapSysOpen, Type: ebpf.Hash, KeySize: 8, ValueSize: uint32(ss.value),
		MaxEntries: sysMaxOpen, Flags: 1} // BPF_F_NO_PREALLOC: most threads are not in a call
	ss.build = &ebpf.MapSpec{Name: mapSysBuild, Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: uint32(ss.value), MaxEntries: 1}
	var err error
	ss.enter = map[int]*ebpf.ProgramSpec{}
	for _, n := range ss.arities() {
		if ss.enter[n], err = ss.program(fmt.Sprintf("utap_sys_enter%d", n), m, v4, false, n); err != nil {
			return nil, err
		}
	}
	if ss.exit, err = ss.program("utap_sys_exit", m, v4, true, 0); err != nil {
		return nil, err
	}
	return ss, nil
}

// slotSize is the bytes of a capture's slot in the record.
func (ss *sysSpec) slotSize(c sysCap) int {
	switch c.kind {
	case capStr:
		return 8 + align8(c.max+1) // one more, to tell a string of max bytes from a longer one
	case capStrArray:
		return 8 + align8(c.max+1) // a cut last string comes with a NUL
	case capNone, capStrCount:
		return 8
	case capIov:
		return 8 + ss.iovElems()*ss.iovSub()
	}
	return 8 + align8(c.max)
}

func align8(n int) int { return (n + 7) &^ 7 }

// program is the ProgramSpec of the enter or exit program.
func (ss *sysSpec) program(name string, m maps, v4, exit bool, nargs int) (*ebpf.ProgramSpec, error) {
	insns, err := ss.insns(m, v4, exit, nargs)
	if err != nil {
		return nil, err
	}
	return &ebpf.ProgramSpec{Name: name, Type: ebpf.TracePoint, License: "GPL", Instructions: insns}, nil
}

// isSysRecord says whether a ring record is a system call's.
func isSysRecord(raw []byte) bool {
	return len(raw) >= 8 && binary.LittleEndian.Uint64(raw)&sysTag != 0
}

// decodeSys turns a call's record into ev.
func (y *sysSession) decode(raw []byte, ev *probe.Event) error {
	le := binary.LittleEndian
	if len(raw) < sysOffCaps {
		return fmt.Errorf("short system call record (%d bytes)", len(raw))
	}
	nr := int(le.Uint64(raw[sysOffNr:]))
	c := y.calls[nr]
	if c == nil || uint64(c.site) != le.Uint64(raw)&^sysTag || len(raw) < c.size {
		return fmt.Errorf("system call record of %d bytes for call %d", len(raw), nr)
	}
	s := &y.sites[c.site]
	pidTgid := le.Uint64(raw[sysOffPidTgid:])
	sys := &probe.Syscall{Nr: nr, Returned: le.Uint64(raw[sysOffFlags:])&sysReturned != 0,
		Entry: make([][]byte, len(c.info.caps)), Exit: make([][]byte, len(c.info.caps))}
	for i, off := range sysArgOff {
		sys.Args[i] = le.Uint64(raw[off:])
	}
	if sys.Returned {
		sys.Ret = int64(le.Uint64(raw[regAX:]))
	}
	var failed []int // captures the kernel could not read
	for i, cp := range c.info.caps {
		if cp.user || i >= sysMaxCaps {
			// Read from user space after the fact: the kernel's
			// program reads the first sysMaxCaps.
			failed = append(failed, i)
		}
		if i >= sysMaxCaps || cp.kind == capNone {
			continue
		}
		slot := raw[c.offs[i] : c.offs[i]+y.slotSize(cp)]
		if res := int64(le.Uint64(slot)); res < 0 && res != sysNotRead {
			failed = append(failed, i)
		}
		b := y.capture(slot, cp)
		if cp.exit {
			sys.Exit[i] = b
		} else {
			sys.Entry[i] = b
		}
	}
	pid := int(pidTgid >> 32)
	y.readFailed(pid, sys, failed, le.Uint64(raw[sysOffSP:]))
	y.fullDirents(sys, raw)
	if y.fdPaths {
		sys.FdPaths = syscalls.FdPaths(pid, sys, y.strLen) // read as soon as the record is
	}
	if ret, ok := syscalls.SigreturnRet(sys); ok {
		// Sent at entry (no exit tracepoint names it): what it returns
		// is the restored frame's rax, read with its mask.
		sys.Ret, sys.Returned = ret, true
	}
	// Stamped when it returned, as every return event (the writers take
	// the duration off for the call's start).
	start, dur := int64(le.Uint64(raw[sysOffTime:])), int64(le.Uint64(raw[sysOffDur:]))
	if sys.Returned {
		start += dur
	}
	*ev = probe.Event{
		TimeNs: start, DurationNs: dur,
		PID: int(pidTgid >> 32), TID: int(uint32(pidTgid)),
		Probe: s.Spec.Text, Func: s.Func, Kind: probe.Return.String(), ProbeIndex: s.Probe, Sys: sys,
	}
	if y.stk != nil {
		ev.Stack = y.stk.sysStack(ev.TID, nr)
	}
	fetchSys(ev, s, c.info.caps)
	return nil
}

// capture is the bytes of one capture slot, nil when not read.
func (y *sysSession) capture(slot []byte, c sysCap) []byte {
	le := binary.LittleEndian
	res := int64(le.Uint64(slot))
	if res < 0 {
		return nil
	}
	data := slot[8:]
	switch c.kind {
	case capStr:
		if res == 0 {
			return nil
		}
		if int(res) > c.max { // longer than max: max bytes, no NUL
			return clone(data[:c.max])
		}
		return clone(data[:res])
	case capBytes:
		return clone(data[:min(int(res), c.max)])
	}
	return y.arrayBytes(c, res, data)
}

func clone(b []byte) []byte { return append([]byte{}, b...) }

// sysArrayEnded marks, in an array capture's result, an array that ended
// with its NULL pointer within the strings read.
const sysArrayEnded = int64(1) << 32
