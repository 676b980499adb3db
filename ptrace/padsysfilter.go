//go:build linux && amd64

package ptrace

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/utap/utap/internal/pad"
	"github.com/utap/utap/internal/proc"
)

// A program that installs a seccomp filter of its own may refuse the
// calls a pad makes (process_vm_readv, getpid, futex): filters are all
// asked, the strictest answer wins, and a pad's call is no different for
// them. So the calls that install one stop (gateFilter adds them), and
// before the filter goes in the process's system call pads are taken
// out: its calls stop from then on. An image started with filters other
// than utap's gets none (sysPadsOf).

// filterComing takes p's system call pads out when th is about to
// install a seccomp filter (seccomp(SECCOMP_SET_MODE_FILTER) or
// prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER)); th is at the call's entry.
func (pd *padEngine) filterComing(th *thread, nr int, args [6]uint64) {
	p := th.p
	if p.pads == nil || p.pads.sys == nil || p.pads.sys.off {
		return
	}
	why := fmt.Sprintf("pid %d installs a seccomp filter: its system calls stop from now on", p.pid)
	switch {
	case nr == unix.SYS_SECCOMP && args[0] == unix.SECCOMP_SET_MODE_FILTER:
	case nr == unix.SYS_PRCTL && args[0] == unix.PR_SET_SECCOMP && args[1] == unix.SECCOMP_MODE_FILTER:
	case p.pads.sys.traps != nil && execMapping(nr, args) && !p.filtered:
		// Code written at run time would make calls no trap sees, and no
		// filter went in for them (filterIn).
		why = fmt.Sprintf("pid %d makes memory executable that no file backs (code written at run time): "+
			"every system call stops from now on", p.pid)
	default:
		return
	}
	tr := pd.tr
	tr.quiesce(p)
	pd.takeOutSys(p)
	tr.resumeOthers(p, th)
	pd.say(why)
}

// takeOutSys puts the original bytes back at p's system call sites;
// p's threads are all stopped. A thread at a pad's `syscall`, or just
// after it, or in its displaced instructions (copied at the same
// offsets) goes to the same place in the original code; a thread past
// its call, writing the record, finishes the pad.
func (pd *padEngine) takeOutSys(p *process) {
	sp := p.pads.sys
	if sp == nil {
		return
	}
	sp.off = true
	if len(sp.sites) == 0 && len(sp.traps) == 0 {
		return
	}
	sp.trapsOut(p)
	for _, s := range sp.sites {
		cur := make([]byte, len(s.orig))
		if p.mem.ReadByMem(cur, s.first) == nil && !bytes.Equal(cur, s.orig) {
			p.mem.WriteAt(s.orig, s.first)
		}
	}
	for _, t := range p.threads {
		var regs unix.PtraceRegs
		if !t.stopped || t.dead || proc.GetRegs(t.tid, &regs) != nil {
			continue
		}
		if pd.moveOut(t, &regs, false) {
			pd.tr.setRegs(t, &regs)
		}
	}
	sp.sites, sp.traps = map[uint64]*sysSite{}, nil
}

// moveOut moves a thread at a pad's `syscall` or before it to the same
// place in the original code; one just after it (the call returned, or
// was interrupted) to just after the original, the call's line then
// made from the registers when the call ran (signal: it is reported
// interrupted, as strace does; else only when it returned for good).
func (pd *padEngine) moveOut(th *thread, regs *unix.PtraceRegs, signal bool) bool {
	sp := th.p.pads.sys
	if !pd.tr.sys.gateOf().holds(regs.Rip) {
		return false
	}
	if sp.trapMoveOut(regs) {
		return true
	}
	for _, s := range sp.sites {
		switch {
		case regs.Rip == s.pad+2:
			returnAt(regs, s.pad, s.sc)
			// A dispatch or watch pad writes no record.
			if sy := pd.tr.sys; sy != nil && !s.dispatch && (signal || !restarting(int64(regs.Rax))) {
				sy.padLine(th, s.nr, regs.Rdi, regs.Rsi, regs.Rdx, regs.R10, regs.R8, regs.R9, int64(regs.Rax), regs.Rsp)
			}
			return true
		case s.dispatch && regs.Rip >= s.tsc && regs.Rip < s.padAt+uint64(s.padLen):
			// Comparing (rcx its only change, which the call
			// overwrites), at its `syscall`, or on the way to the
			// trap: the original `syscall`, whose trap sees the call.
			regs.Rip = s.sc
			return true
		case signal && regs.Rip == s.pad:
			regs.Rip = s.sc // the call is made again from the original
			return true
		case !signal && regs.Rip >= s.padAt && regs.Rip < s.tsc:
			if orig, ok := s.disp.OrigOf(s.padAt, regs.Rip); ok {
				regs.Rip = orig
				return true
			}
		case !signal && regs.Rip >= s.tsc && regs.Rip <= s.pad:
			// Taking the TSC before the call: the original is at its
			// `syscall`, rdx kept below rsp, eax the number.
			if regs.Rip > s.tsc {
				var b [8]byte
				if th.p.mem.ReadAt(b[:], regs.Rsp-uint64(-pad.SysRdxSlot)) == nil {
					regs.Rdx = binary.LittleEndian.Uint64(b[:])
				}
			}
			regs.Rax, regs.Rip = uint64(s.nr), s.sc
			return true
		}
	}
	return false
}

// returnAt moves a thread just after the `syscall` at from (a pad's, a
// trampoline's) to just after the one at to, rcx as the kernel leaves it
// after that one.
func returnAt(regs *unix.PtraceRegs, from, to uint64) {
	regs.Rip = to + 2
	if regs.Rcx == from+2 {
		regs.Rcx = to + 2
	}
}

func (sy *sysTrace) gateOf() *sysGate {
	if sy == nil {
		return nil
	}
	return sy.gate
}

// restarting: the kernel restarts a call interrupted with this result
// when no handler runs (-ERESTARTSYS, -ERESTARTNOINTR,
// -ERESTARTNOHAND, -ERESTART_RESTARTBLOCK).
func restarting(ret int64) bool { return ret == -512 || ret == -513 || ret == -514 || ret == -516 }

// seccompFilters is the filters p runs under (its status's
// Seccomp_filters), -1 when it cannot tell.
func seccompFilters(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for l := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(l, "Seccomp_filters:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				return -1
			}
			return n
		}
	}
	return -1
}
