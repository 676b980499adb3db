//go:build linux && amd64

package ptrace

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/utap/utap/internal/proc"
	"github.com/utap/utap/probe"
	"github.com/utap/utap/uretprobe"
)

// Return probes come in two kinds (uretprobe.Strategy):
//
//   - Hijack (C, C++): the function's first instruction carries a
//     breakpoint (hidden when only the return is probed) at which the
//     return address at [rsp] is swapped for the trampoline, an int3 at
//     offset 0 of the SSOL area, and pushed on the thread's ShadowStack.
//     The trampoline trap pops it, reports and sets rip to the original.
//     Two stops per call in all.
//   - RetProbes (Go; any function of a process with the CET shadow stack):
//     return addresses are never touched. A breakpoint at the entry (after
//     Go's stack check: uretprobe.GoEntry) opens the call in a
//     callPairs and one on every RET closes it, for the duration.
//     Go calls are keyed by goroutine, not thread: r14 holds the g in Go's
//     ABIInternal, and a goroutine may return on another thread than it
//     entered on; positions are goPos from g.stack.hi, which
//     survive the runtime copying the stack. Assembly (ABI0) functions do
//     not keep r14 = g: their durations may be missing, never their events.

// returns is the return probes' side of the trace: hijacks, the
// trampoline, call pairs.
type returns struct{ tr *tracer }

// retProc is a process's return probes.
type retProc struct {
	tramp   uint64       // return trampoline (an int3 at offset 0 of the first area), 0 if none
	groups  []*retGroup  // return probes, by Frame.Site / Calls site id
	calls   *callPairs   // entry/RET pairing of RetProbes functions
	inherit *shadowStack // fork child without Follow: the forking thread's frames, to restore
}

// retThread is a thread's hijacked return addresses, nil until the first.
type retThread struct{ shadow *shadowStack }

// retLimit bounds a thread's hijacked frames: deep enough for 10,000-deep
// recursion, small enough to bound the tracer's memory (48 bytes a frame).
const retLimit = 1 << 16

// retGroup is the return probes of one function in one process image.
type retGroup struct {
	id     int // index in process.groups: retFrame.Site and the callPairs site
	sites  []*siteProg
	method uretprobe.Method
	goABI  bool // Calls keyed by goroutine
	// args: a site reads argument values of the entry at the return
	// (probe.EntryArg): each call keeps its argument registers.
	args bool
}

// shadowOf returns th's shadow stack, created at its first hijack.
func (p *process) shadowOf(th *thread) *shadowStack {
	if th.shadow == nil {
		th.shadow = newShadowStack(p.tramp, retLimit)
		th.shadow.padded = func(a uint64) bool { return p.pads != nil && p.pads.inPad(a) }
	}
	return th.shadow
}

// retHit does the return-probe work of bp at a hit, regs as at the
// breakpoint (rip = bp.addr, before the displaced instruction runs).
func (r *returns) retHit(th *thread, bp *breakpoint, regs *unix.PtraceRegs) {
	tr := r.tr
	p := th.p
	if bp.unwinder {
		// The unwinder reads every return address above it: put them
		// back, the return pads' first (a tail call from a breakpoint's
		// hijack into a pad's keeps the trampoline as the real address).
		tr.pads.restoreReturns(th, regs)
		if th.shadow != nil {
			th.shadow.Restore(p.mem, regs.Rsp)
		}
	}
	if bp.hijack == nil && len(bp.enter) == 0 && len(bp.rets) == 0 {
		return
	}
	now := tr.clock.now()
	for _, g := range bp.rets {
		key, pos := p.callKey(th, g, regs)
		dur, args, _ := p.calls.ReturnArgs(key, g.id, pos, now)
		if p.report {
			r.reportReturn(th, g, regs, now, dur, args)
		}
	}
	for _, g := range bp.enter {
		key, pos := p.callKey(th, g, regs)
		p.calls.EnterArgs(key, g.id, pos, now, g.entryArgs(regs))
	}
	if g := bp.hijack; g != nil && p.report && !bp.unwinder {
		// On error (too deep, unreadable stack) nothing was hijacked and
		// this call's return goes unreported, counted in the stack's Stats.
		p.shadowOf(th).Push(p.mem, retFrame{SP: regs.Rsp, Site: g.id, EntryTime: now, Args: g.entryArgs(regs)})
	}
}

// callKey returns the stack a RetProbes call nests on and its position.
func (p *process) callKey(th *thread, g *retGroup, regs *unix.PtraceRegs) (key, pos uint64) {
	if !g.goABI {
		return uint64(th.tid), regs.Rsp
	}
	// r14 is the g; g.stack.hi is its second word.
	var b [8]byte
	if regs.R14 == 0 || p.mem.ReadAt(b[:], regs.R14+8) != nil {
		return uint64(th.tid), regs.Rsp
	}
	return regs.R14, goPos(binary.LittleEndian.Uint64(b[:]), regs.Rsp)
}

// trampoline handles a trap on the trampoline: a hijacked call returned.
func (r *returns) trampoline(th *thread, regs *unix.PtraceRegs) {
	tr := r.tr
	if err := r.returnAt(th, regs); err != nil {
		// Nowhere to return to: what the kernel does for a lost uretprobe.
		tr.fail(fmt.Errorf("pid %d tid %d: return trampoline: %w", th.p.pid, th.tid, err))
		th.sig = int(unix.SIGILL)
	}
}

// returnAt completes the return of a thread on the trampoline (rsp just
// above the hijacked slot): pops its frames, reports them and sets rip to
// the original return address.
func (r *returns) returnAt(th *thread, regs *unix.PtraceRegs) error {
	tr := r.tr
	p := th.p
	var frames []retFrame
	err := errLost
	if th.shadow != nil {
		frames, err = th.shadow.Pop(p.mem, regs.Rsp)
	}
	if err == nil && len(frames) == 0 {
		err = errLost
	}
	if err != nil {
		return err
	}
	regs.Rip = frames[0].OrigRet
	if p.report {
		now := tr.clock.now()
		for _, f := range frames {
			r.reportReturn(th, p.groups[f.Site], regs, now, now-f.EntryTime, f.Args)
		}
	}
	tr.setRegs(th, regs)
	return nil
}

// reportReturn emits the return events of g whose condition holds, with
// the registers at the return and the call's at its entry (nil if not kept).
func (r *returns) reportReturn(th *thread, g *retGroup, regs *unix.PtraceRegs, now, dur int64, args *entryArgs) {
	tr := r.tr
	env := tr.out.hitEnvFor(th, regs)
	env.entry = args
	defer func() { env.entry = nil }()
	defer tr.stacks.withStack(th, regs, len(tr.out.pending))
	for _, sp := range g.sites {
		if ev := tr.out.newEvent(th, sp, env, "return"); ev != nil {
			ev.TimeNs, ev.DurationNs = now, dur
			ev.Ret = &probe.Value{Int: regs.Rax, Signed: true}
			tr.out.queue(ev)
		}
	}
}

// leaveTrampoline moves a thread stopped on the trampoline (about to trap
// there, or with the trap pending) to its original return address, before
// the area goes away.
func (r *returns) leaveTrampoline(th *thread, regs *unix.PtraceRegs) {
	tr := r.tr
	p := th.p
	if p.tramp == 0 || (regs.Rip != p.tramp && regs.Rip != p.tramp+1) {
		return
	}
	if th.shadow == nil {
		return
	}
	frames, err := th.shadow.Pop(p.mem, regs.Rsp)
	if err != nil || len(frames) == 0 {
		return
	}
	regs.Rip = frames[0].OrigRet
	tr.setRegs(th, regs)
}

// restoreReturns puts back every return address p's threads have
// hijacked; they are all stopped.
func (r *returns) restoreReturns(p *process) error {
	var first error
	var regs unix.PtraceRegs
	for _, th := range p.threads {
		if th.shadow == nil || th.shadow.Len() == 0 || !th.stopped || proc.GetRegs(th.tid, &regs) != nil {
			continue
		}
		r.leaveTrampoline(th, &regs)
		if _, err := th.shadow.Restore(p.mem, regs.Rsp); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// ownTrap takes the trampoline's trap: a hijacked call returned.
func (r *returns) ownTrap(s *stop) bool {
	p := s.th.p
	if !s.kernelTrap() || p.tramp == 0 || s.regs.Rip-1 != p.tramp {
		return false
	}
	r.trampoline(s.th, &s.regs)
	r.tr.sigs.trapTaken(s.th)
	return true
}

// ownSignal takes a signal arriving as a hijacked call returns, before
// the trampoline's int3: its frame would save the trampoline as the
// resume point, which is gone once detached. The call returns now.
func (r *returns) ownSignal(s *stop) bool {
	th := s.th
	if p := th.p; p.tramp == 0 || s.regs.Rip != p.tramp || th.shadow == nil {
		return false
	}
	r.returnAt(th, &s.regs)
	th.sig = s.sig
	return true
}
