//go:build linux && amd64

package ptrace

import (
	"debug/buildinfo"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/utap/utap/internal/pad"
	"github.com/utap/utap/internal/syscalls"
)

// System calls without a stop at each: pads and traps (docs/syscalls.md),
// in both modes unless the pads cannot go in (then: run mode's seccomp
// filter from the exec, attach mode's stops at every call). A filter
// cannot go into a process the trace will leave (it outlives the detach,
// and its stops turn into ENOSYS), and it costs every call of the
// program, probed or not; so a process runs free of stops: its probed
// calls with a static number take pads, and every other `syscall`
// instruction that may make a probed call (its number probed, or not set
// by the instructions before it: glibc's syscall(), Go's runtime) gets an
// int3, as does every padded site's original `syscall` (a restart after a
// signal). A trap runs the call from a trampoline in the gate (`syscall;
// jmp back`), single-stepped when it is probed (or under PTRACE_SYSCALL,
// for the calls that keep their stops), so its line is the stop path's.
// The sites of a number not static take dispatch pads, and those of the
// watched calls watch pads (padsyswatch.go), so that only probed calls
// reach an int3. What the traps cannot see, code written at run time, is
// watched for: a call that maps or makes memory executable outside a
// file (mmap, mprotect, pkey_mprotect with PROT_EXEC) goes to its trap;
// in run mode the filter then goes in (filterIn: the calls from outside
// the gate stop when probed), attached (or with --no-seccomp) the
// process goes back to stopping at every call, said once. A process
// whose traps are not in (not yet loaded, no gate, another seccomp
// filter) stops at every call.

// sysTrap is one `syscall` instruction holding an int3.
type sysTrap struct {
	sc    uint64 // the original `syscall`
	tramp uint64 // its trampoline in the gate: `syscall; jmp *(%rip); sc+2`
	nr    int    // the number the instructions before it set, -1 if not static
}

// trampSize is a trampoline's bytes.
const trampSize = 16

// trapWatched are calls whose sites always take a trap in trap mode:
// those that may make memory executable, and those that install a
// seccomp filter (padsysfilter.go).
var trapWatched = map[int]bool{
	unix.SYS_MMAP: true, unix.SYS_MPROTECT: true, unix.SYS_PKEY_MPROTECT: true,
	unix.SYS_SECCOMP: true, unix.SYS_PRCTL: true,
}

// memWatched are the watched calls that may make memory executable.
var memWatched = map[int]bool{unix.SYS_MMAP: true, unix.SYS_MPROTECT: true, unix.SYS_PKEY_MPROTECT: true}

// trapWanted says whether a `syscall` of number nr (-1: not static)
// takes a trap.
func (sy *sysTrace) trapWanted(nr int) bool {
	return nr < 0 || len(sy.byNr[nr]) > 0 || trapWatched[nr]
}

// trapAt is p's trap at addr, nil if none.
func (p *process) trapAt(addr uint64) *sysTrap {
	if p.pads == nil || p.pads.sys == nil {
		return nil
	}
	return p.pads.sys.traps[addr]
}

// quiet says whether p's threads run free between their probed calls:
// its traps are in and still hold.
func (p *process) quiet() bool {
	return p.pads != nil && p.pads.sys != nil && p.pads.sys.trapped && !p.pads.sys.off
}

// addAll writes the trampolines of the `syscall`s of traps in the gate
// and the int3 on each: their bytes checked in one read, the
// trampolines, side by side, in one vectored write, then the int3s (a
// write each: three system calls a trap were a sixth of placing an
// image's pads). On an error, the sc it names, the traps before it in.
func (o sysTraps) addAll(p *process, sp *sysPads, traps []sysTrap) (uint64, error) {
	sy := o.tr.sys
	if len(traps) == 0 {
		return 0, nil
	}
	if sp.next+trampSize*uint64(len(traps)) > sy.gate.size {
		return traps[0].sc, fmt.Errorf("the gate is full")
	}
	bytes := make([]byte, 2*len(traps))
	bufs, addrs := make([][]byte, len(traps)), make([]uint64, len(traps))
	for k, t := range traps {
		bufs[k], addrs[k] = bytes[2*k:2*k+2], t.sc
	}
	if p.mem.ReadScattered(bufs, addrs) != nil {
		for k, t := range traps { // a page it may not read: one at a time, through /proc
			if err := p.mem.ReadByMem(bufs[k], t.sc); err != nil {
				return t.sc, fmt.Errorf("its bytes in memory are not a syscall")
			}
		}
	}
	tramps := make([][]byte, len(traps))
	for k, t := range traps {
		if bufs[k][0] != 0x0f || bufs[k][1] != 0x05 {
			return t.sc, fmt.Errorf("its bytes in memory are not a syscall")
		}
		tramps[k] = pad.AbsJmp(append(make([]byte, 0, trampSize), 0x0f, 0x05), t.sc+2)
		for len(tramps[k]) < trampSize {
			tramps[k] = append(tramps[k], 0xcc)
		}
	}
	at := sy.gate.addr + sp.next
	if err := p.mem.WritevAt(tramps, at); err != nil {
		return traps[0].sc, err
	}
	sp.next += trampSize * uint64(len(traps))
	if sp.traps == nil {
		sp.traps = map[uint64]*sysTrap{}
	}
	for k, t := range traps {
		if err := p.mem.WriteAt([]byte{0xcc}, t.sc); err != nil {
			return t.sc, err
		}
		sp.traps[t.sc] = &sysTrap{sc: t.sc, tramp: at + trampSize*uint64(k), nr: t.nr}
	}
	return 0, nil
}

// sysTraps is the trap owner of the `syscall` int3s.
type sysTraps struct{ tr *tracer }

// ownTrap sends a thread at a trapped `syscall` to its trampoline, under
// PTRACE_SYSCALL when the call is probed or watched.
func (o sysTraps) ownTrap(s *stop) bool {
	if o.stepDone(s) {
		return true
	}
	th := s.th
	t := th.p.trapAt(s.regs.Rip - 1)
	if !s.kernelTrap() || t == nil {
		return false
	}
	nr := int(s.regs.Rax)
	sy := o.tr.sys
	if execMapping(nr, callArgs(&s.regs)) && sy.filterLater() && !th.p.filtered {
		o.filterIn(th)
	}
	info := syscalls.Lookup(nr)
	// Once the filter is in, code written at run time is its to watch.
	watched := trapWatched[nr] && !(th.p.filtered && memWatched[nr])
	switch probed := len(sy.byNr[nr]) > 0 && th.p.report; {
	case watched || probed && (info == nil || stopCalls[nr] || info.NoReturn):
		// Its entry and exit stops, as the stop path has them.
		th.sysNext = true
	case probed:
		// The `syscall` single-stepped: its step trap is the exit.
		sy.trapEnter(th, nr, &s.regs)
		th.sysStep = t
	}
	s.regs.Rip = t.tramp
	o.tr.setRegs(th, &s.regs)
	o.tr.sigs.trapTaken(th)
	return true
}

// callArgs are the arguments of the system call a thread's registers
// hold (at a trap, in a pad).
func callArgs(r *unix.PtraceRegs) [6]uint64 { return [6]uint64{r.Rdi, r.Rsi, r.Rdx, r.R10, r.R8, r.R9} }

// filterIn puts run mode's filter into th's process as it is about to
// make memory executable that no file backs: the calls of the code
// written there stop when probed, its pads and traps stay (seccomp.go).
// If it cannot, the call goes on to filterComing, which takes them out.
func (o sysTraps) filterIn(th *thread) {
	tr, p := o.tr, th.p
	tr.quiesce(p)
	err := tr.sys.lateFilter(p, th)
	tr.resumeOthers(p, th)
	if err == nil {
		tr.pads.say(fmt.Sprintf("pid %d makes memory executable that no file backs (code written at run time): "+
			"a seccomp filter stops the probed calls made from there", p.pid))
	}
}

// trapEnter opens the probed call nr a thread at a trap is about to make,
// with no entry event: a signal may call the step off before the call is
// made (trapSignal), and the line is written whole at the exit.
func (sy *sysTrace) trapEnter(th *thread, nr int, regs *unix.PtraceRegs) {
	c := &sysCall{nr: nr, args: callArgs(regs), sp: regs.Rsp,
		start: sy.tr.clock.now(), sites: sy.byNr[nr]}
	if info := syscalls.Lookup(nr); info != nil {
		c.entry = sy.capture(th.p, info, c, false, 0)
	}
	th.call = c
}

// stepDone takes the trap of a `syscall` single-stepped from a trampoline
// (it returned, or was interrupted: then rax is -ERESTART*): its line,
// and the thread after the original `syscall`, where a restart goes
// through the trap again.
func (o sysTraps) stepDone(s *stop) bool {
	th := s.th
	t := th.sysStep
	if t == nil || s.sig != int(unix.SIGTRAP) || s.si.Code <= 0 || s.regs.Rip != t.tramp+2 {
		return false
	}
	o.tr.sys.stepEnd(th, &s.regs)
	o.tr.sigs.trapTaken(th)
	return true
}

// stepEnd reports a stepped call at its end, th at its trampoline's
// return.
func (sy *sysTrace) stepEnd(th *thread, regs *unix.PtraceRegs) {
	t, c := th.sysStep, th.call
	th.sysStep, th.call = nil, nil
	returnAt(regs, t.tramp, t.sc)
	sy.tr.setRegs(th, regs)
	switch {
	case c != nil && sy.detachStop(int64(regs.Rax)):
		th.call = c // made again untraced: the detach ends its line (gone)
	case c != nil:
		sy.exit(th, c, int64(regs.Rax), true)
	}
}

// trapSignal takes a signal stop of a thread stepping a `syscall`: one
// before the call is made calls the step off (the thread goes back to the
// trap, taken again once the signal is handled); one after it (the step's
// trap comes first, so hardly) ends it. The signal is then delivered.
func (sy *sysTrace) trapSignal(s *stop) {
	th := s.th
	t := th.sysStep
	switch s.regs.Rip {
	case t.tramp:
		th.sysStep, th.call = nil, nil
		s.regs.Rip = t.sc
		sy.tr.setRegs(th, &s.regs)
	case t.tramp + 2:
		sy.stepEnd(th, &s.regs)
	}
}

// execMapping says whether a call makes memory executable that no file
// backs (code written at run time), which the traps would not see.
func execMapping(nr int, args [6]uint64) bool {
	switch nr {
	case unix.SYS_MMAP:
		return args[2]&unix.PROT_EXEC != 0 && args[3]&unix.MAP_ANONYMOUS != 0
	case unix.SYS_MPROTECT, unix.SYS_PKEY_MPROTECT:
		return args[2]&unix.PROT_EXEC != 0
	}
	return false
}

// trapMoveOut moves a thread at a trampoline to the original: before its
// `syscall` to the int3's address (the call not made yet), just after it
// to just after the original (the kernel's restart, if any, then goes
// through the original).
func (sp *sysPads) trapMoveOut(regs *unix.PtraceRegs) bool {
	for _, t := range sp.traps {
		switch regs.Rip {
		case t.tramp:
			regs.Rip = t.sc
			return true
		case t.tramp + 2:
			returnAt(regs, t.tramp, t.sc)
			return true
		}
	}
	return false
}

// trapsOut puts the original byte back at every trap of p; a trap
// already taken and not yet reported is then swallowed (ownTrap's
// p.removed).
func (sp *sysPads) trapsOut(p *process) {
	var b [1]byte
	for sc := range sp.traps {
		if p.mem.ReadByMem(b[:], sc) == nil && b[0] == 0xcc {
			p.mem.WriteAt([]byte{0x0f}, sc)
		}
		if p.removed != nil {
			p.removed[sc] = true
		}
	}
}

// vdso scans the vDSO, whose fallbacks make calls (clock_gettime on a
// clock it cannot read): its image is copied out of memory into a file
// the scan reads as any object's.
func (sc sysScan) vdso(m mapping) string {
	b := make([]byte, m.End-m.Start)
	if err := sc.p.mem.ReadByMem(b, m.Start); err != nil {
		return fmt.Sprintf("the vDSO cannot be read: %v", err)
	}
	dir, err := os.MkdirTemp("", "utap-vdso")
	if err != nil {
		return fmt.Sprintf("the vDSO: %v", err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "[vdso]")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return fmt.Sprintf("the vDSO: %v", err)
	}
	vm := m
	vm.Path, vm.Inode = path, 0
	return sc.object(object{path: path}, []mapping{vm})
}

// off takes p's pads and traps out, th one of its stopped threads. In
// run mode the filter goes in first (if not in already), so that only
// probed calls stop; otherwise (attached, --no-seccomp, the filter
// refused) its threads stop at every call from now on, as before the
// attach's traps, so that none is missed.
func (o sysTraps) off(p *process, th *thread, why string) {
	if sy := o.tr.sys; sy.filterLater() && !p.filtered {
		sy.lateFilter(p, th) // refused: every call stops
	}
	o.tr.pads.takeOutSys(p)
	if p.filtered {
		o.tr.pads.say(fmt.Sprintf("pid %d: its probed system calls stop from now on (a seccomp filter): %s", p.pid, why))
		return
	}
	o.tr.pads.say(fmt.Sprintf("pid %d: every system call stops from now on: %s", p.pid, why))
}

// anonCode is an executable mapping of p that no file backs and that is
// not utap's (the gate, pad and SSOL areas), as a JIT writes: its calls
// no trap would see. Not the kernel's: the vDSO (scanned), the vsyscall
// page (emulated), the uprobes' XOL area (left by any earlier kernel
// uprobe hit, for the life of the process; a displaced `syscall` there
// would be a probed one's, a case not covered).
func anonCode(p *process, m mapping) bool {
	switch {
	case m.Path != "" && m.Path[0] != '[', m.Path == "[vdso]", m.Path == "[vsyscall]", m.Path == "[uprobes]":
		return false
	}
	for _, a := range p.areas {
		if m.Start >= a.start && m.Start < a.start+a.size {
			return false
		}
	}
	return p.pads == nil || !p.pads.inPad(m.Start)
}

// goProgram says whether pid runs a Go program (its build information).
func goProgram(pid int) bool {
	_, err := buildinfo.ReadFile(fmt.Sprintf("/proc/%d/exe", pid))
	return err == nil
}
