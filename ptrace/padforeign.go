//go:build linux && amd64

package ptrace

import (
	"bytes"
	"errors"
	"fmt"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/utap/utap/internal/proc"
)

// Another tracer's uprobe on a padded entry (bpftrace, perf probe, a
// tracefs uprobe_events line) puts its int3 over the first byte of our
// jmp. The kernel runs, when it is hit, the instruction it read from the
// file (not our jmp), out of line, and resumes after it: in the middle of
// our jmp's rel32. What runs there is the jump's address bytes; when it
// faults at once (it did in every case tried), the registers are those
// after the site's first instruction, and the fault's rip is its end.
// Taken off the uprobe's uninstall, the kernel writes the file's first
// byte back over our e9: the same bytes then fault at the site itself.
//
// Such a fault, at an instruction boundary of the displaced bytes, is
// ours to repair: the original bytes go back after the uprobe's int3
// (if still there), the thread resumes at the boundary, the site's pad is
// off. One line says so. A site whose first byte is already a foreign
// int3 gets neither pad nor breakpoint: the two would fight over it.

// errForeign: a foreign int3 at a site.
var errForeign = errors.New("another tracer's breakpoint is there (a uprobe: bpftrace, perf probe, tracefs)")

// repair repairs a fault of th at a padded site whose jmp another
// tracer changed; it reports whether it did (the fault is swallowed).
func (pd *padEngine) repair(th *thread, regs *unix.PtraceRegs, sig int, si *proc.Siginfo) bool {
	tr := pd.tr
	rip := regs.Rip
	if sig == int(unix.SIGTRAP) {
		rip-- // an int3 among the bytes: rip is after it
	}
	p := th.p
	ps := p.padAt(rip)
	if ps == nil {
		return false
	}
	cur := make([]byte, len(ps.jmp))
	if p.mem.ReadByMem(cur, ps.from()) != nil || bytes.Equal(cur, ps.jmp) {
		return false
	}
	line := fmt.Sprintf("%s at %#x: another tracer's uprobe changed the jump to its in-process pad (%s at %#x)",
		ps.name, ps.addr, unix.SignalName(unix.Signal(sig)), regs.Rip)
	if !ps.boundary(rip) {
		tr.notices = append(tr.notices, line+": not at an instruction, delivered")
		return false
	}
	orig := slices.Clone(ps.orig)
	if i := ps.addr - ps.from(); cur[i] == 0xcc {
		orig[i] = 0xcc // the uprobe's int3, at the site, stays
	}
	if err := p.mem.WriteAt(orig, ps.from()); err != nil {
		tr.notices = append(tr.notices, fmt.Sprintf("%s: writing the original code back: %v", line, err))
		return false
	}
	delete(p.pads.sites, ps.addr)
	regs.Rip = rip
	tr.setRegs(th, regs)
	tr.notices = append(tr.notices, line+": its original code is back and the thread went on; "+
		"the probe there is off, the other tracer's stays")
	return true
}

// boundary says whether addr starts one of the displaced instructions.
func (ps *padSite) boundary(addr uint64) bool {
	for _, in := range ps.disp.Insns {
		if in.Addr == addr {
			return true
		}
	}
	return false
}
