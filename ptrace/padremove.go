//go:build linux && amd64

package ptrace

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/utap/utap/internal/proc"
)

// takeOut takes p's pads out; its threads are all stopped. The original
// bytes go back first, so no thread enters a pad again; threads inside a
// pad are stepped out of it; the areas go only if no signal frame on any
// stack would return into one; the ring is drained last.
func (pd *padEngine) takeOut(p *process, th *thread) {
	tr := pd.tr
	pp := p.pads
	if pp == nil {
		return
	}
	pd.takeOutSys(p)
	for _, ps := range pp.sites {
		cur := make([]byte, len(ps.jmp))
		if p.mem.ReadByMem(cur, ps.from()) == nil && !bytes.Equal(cur, ps.jmp) {
			tr.overwritten = append(tr.overwritten, ps.name)
			continue
		}
		p.mem.WriteAt(ps.orig, ps.from())
	}
	pp.sites = map[uint64]*padSite{}
	if pp.ring != nil {
		pp.ring.StopWaits()
		aliveOff(pp.ring.View()) // no read starts by loads from now on
	}
	for _, t := range p.threads {
		pd.stepOut(t)
	}
	pd.restoreAllReturns(p)
	keep := pd.framesLeft(p)
	pd.shadowGone(p, th, keep)
	if th != nil {
		if !keep {
			for _, a := range pp.areas {
				tr.inject(th, unix.SYS_MUNMAP, a.start, a.size)
			}
		}
		if pp.ring != nil {
			tr.inject(th, unix.SYS_MUNMAP, pp.ring.Addr, pp.ring.Size)
		}
	}
	if keep {
		tr.notices = append(tr.notices, fmt.Sprintf("pid %d: a signal handler interrupted inside a pad is still running: "+
			"the pad area stays mapped (its sites are restored)", p.pid))
	}
	pp.areas, pp.fixups = nil, nil
	pd.ringGone(p)
}

// inPad says whether addr is in one of p's pad areas.
func (pp *padProc) inPad(addr uint64) bool {
	for _, a := range pp.areas {
		if addr >= a.start && addr < a.start+a.size {
			return true
		}
	}
	return false
}

// stepOut single-steps a stopped thread until it leaves the pads:
// a pad is straight code ending in a jump back, a few dozen instructions.
// Signals that arrive meanwhile are queued again for after.
func (pd *padEngine) stepOut(th *thread) {
	pp := th.p.pads
	if !th.stopped || th.dead {
		return
	}
	var regs unix.PtraceRegs
	var again []int
	defer func() {
		for _, s := range again {
			resend(th.p.pid, th.tid, s)
		}
	}()
	for range 10000 {
		if proc.GetRegs(th.tid, &regs) != nil || !pp.inPad(regs.Rip) {
			return
		}
		if proc.Step(th.tid, 0) != nil {
			return
		}
		_, ws, err := proc.Wait(th.tid, 0)
		if err != nil {
			return
		}
		switch {
		case ws.Exited() || ws.Signaled():
			th.dead = true
			return
		case ws.Stopped() && ws.StopSignal() != unix.SIGTRAP && proc.Event(ws) == 0:
			again = append(again, int(ws.StopSignal()))
		}
	}
}

// framesLeft says whether any thread's stack holds an address inside a
// pad: a signal frame whose handler will return into it.
func (pd *padEngine) framesLeft(p *process) bool {
	ms, err := readMaps(p.pid)
	if err != nil {
		return true
	}
	g := pd.tr.sys.gateOf()
	for _, th := range p.threads {
		words, _ := threadWords(p, th, ms)
		for i, w := range words {
			if !p.pads.inPad(w) {
				continue
			}
			if i > 0 && g.holds(w) && !sigFrameRip(words, i) {
				// The gate holds no return address: this is the rcx of a
				// call made there, left on the stack.
				continue
			}
			return true
		}
	}
	return false
}

// sigFrameRip says whether words[i] may be a signal frame's saved rip:
// struct sigcontext follows it with eflags (bit 1 always set) and the
// word holding cs (0x33, user 64-bit code).
func sigFrameRip(words []uint64, i int) bool {
	return i+2 < len(words) && words[i+1]&2 != 0 && words[i+2]&0xffff == 0x33
}

// padOf returns the pad site whose pad holds addr, nil if none.
func (pp *padProc) padOf(addr uint64) *padSite {
	if pp == nil || !pp.inPad(addr) {
		return nil
	}
	for _, ps := range pp.sites {
		if addr >= ps.pad && addr < ps.pad+ps.size {
			return ps
		}
	}
	return nil
}

// retPadOf is the site whose return pad holds addr, nil if none.
func (pp *padProc) retPadOf(addr uint64) *padSite {
	if pp == nil || !pp.inPad(addr) {
		return nil
	}
	for _, ps := range pp.sites {
		if ps.retPad != 0 && addr >= ps.retPad && addr < ps.retPad+ps.retSize {
			return ps
		}
	}
	return nil
}

// fault handles a fault raised inside a pad. While the pad saves the
// registers, its stores below the red zone can fault where the program
// itself would not have (a stack next to a read-only page): the thread is
// put back as it was at the site, its hit reported from the stop as a
// breakpoint's would be, and it goes on at the displaced instructions, which
// fault, or not, as the program would. A fault of the first displaced
// instruction is reported at the site's address. It reports whether it
// took the fault (to be swallowed).
func (pd *padEngine) fault(th *thread, regs *unix.PtraceRegs, si *proc.Siginfo) bool {
	tr := pd.tr
	ps := th.p.pads.padOf(regs.Rip)
	if ps == nil {
		return false
	}
	off := int(regs.Rip - ps.pad)
	switch {
	case off < ps.lay.Saved:
		if trapAhead(ps, regs.Rip) {
			defer tr.ld.rescan(th) // the int3 it skips
		}
		regs.Rsp += uint64(ps.lay.Down)
		if off >= ps.lay.RaxSaved {
			var b [8]byte
			if th.p.mem.ReadAt(b[:], regs.Rsp-uint64(ps.lay.Down)) == nil {
				regs.Rax = binary.LittleEndian.Uint64(b[:])
			}
		}
		regs.Rip = ps.addr
		if th.p.report && ps.sp != nil && !ps.syncPoint {
			env := tr.out.hitEnvFor(th, regs)
			if ev := tr.out.newEvent(th, ps.sp, env, "entry"); ev != nil {
				ev.TimeNs = tr.clock.now()
				tr.out.queue(ev)
			}
		}
		regs.Rip = ps.pad + uint64(ps.lay.Displaced)
		tr.setRegs(th, regs)
		return true
	case off == ps.lay.Displaced:
		regs.Rip = ps.addr
		tr.setRegs(th, regs)
		if si.Addr == ps.pad+uint64(off) {
			si.Addr = ps.addr
			proc.SetSiginfo(th.tid, si)
		}
	}
	return false
}

// ringGone drains p's ring a last time, counts its drops, and unmaps the
// tracer's view (the process's own mapping goes with it, or by munmap).
func (pd *padEngine) ringGone(p *process) {
	if p.pads == nil || p.pads.ring == nil {
		return
	}
	r := p.pads.ring
	p.pads.ring = nil
	if view := pd.d.Gone(r); view != nil {
		aliveOff(view)
		unix.Munmap(view)
	}
}
