//go:build linux && amd64

package ptrace

import (
	"encoding/binary"

	"golang.org/x/sys/unix"
)

// Internal breakpoints on libc's sigaction and pthread_sigmask follow
// what the program does to SIGTRAP (sigtrap.go says why).

// sigHook marks the internal breakpoints on libc's signal calls.
type sigHook uint8

const (
	hookAction sigHook = 1 + iota // sigaction(sig, act, oact)
	hookMask                      // pthread_sigmask(how, set, oset)
)

// sigCall runs at the entry of libc's sigaction or pthread_sigmask in
// th, with args the registers as called: it records what the call is
// about to do to SIGTRAP.
func (sg *signals) sigCall(th *thread, hook sigHook, args *unix.PtraceRegs) {
	tr := sg.tr
	p := th.p
	switch hook {
	case hookAction:
		if args.Rdi != uint64(unix.SIGTRAP) {
			return
		}
		if args.Rdx != 0 && p.trap.reset && !p.holding {
			// It asks what the action is: the one it set.
			tr.quiesce(p)
			sg.putTrapBack(th)
			tr.resumeAll(p)
		}
		var b [8]byte
		if args.Rsi == 0 || p.mem.ReadAt(b[:], args.Rsi) != nil {
			return // a query, or a bad pointer: no change
		}
		p.trap = trapState{handler: binary.LittleEndian.Uint64(b[:])}
	case hookMask:
		var b [8]byte
		if args.Rsi == 0 || p.mem.ReadAt(b[:], args.Rsi) != nil {
			return
		}
		in := binary.LittleEndian.Uint64(b[:])&trapBit != 0
		blocked := th.trapBlocked
		switch args.Rdi {
		case unix.SIG_BLOCK:
			blocked = blocked || in
		case unix.SIG_UNBLOCK:
			blocked = blocked && !in
		case unix.SIG_SETMASK:
			blocked = in
		default:
			return // EINVAL
		}
		if blocked && !th.trapBlocked {
			// From now on a trap in th resets a caught handler: know it.
			sg.readTrapAction(p, th)
		}
		th.trapBlocked = blocked
	}
}

// signalWatch puts the internal breakpoints on libc's sigaction and
// pthread_sigmask in the objects being planned that define them.
// A process without them yet has them planned in every object: they
// may be needed only now (sigHooksKept).
func (pl *planner) signalWatch() {
	only := pl.only
	if !pl.p.sigHooked {
		pl.only = nil
		defer func() { pl.only = only }()
	}
	pl.internalWatch(func(oi *objInfo) []internalBP {
		return []internalBP{
			{oi.sigAction, "sigaction", func(bp *breakpoint) { bp.sigHook = hookAction }},
			{oi.sigMask, "pthread_sigmask", func(bp *breakpoint) { bp.sigHook = hookMask }},
		}
	})
}

// sigHooksKept keeps the planned hooks on sigaction and pthread_sigmask
// only where they serve: they follow SIGTRAP's state for our traps, and
// a process whose probes are all pads has none the program runs but
// the loader's (a dlopen). Without them its sigprocmask and sigaction
// calls never stop, so it outlives a tracer killed by SIGKILL. They stay
// when SIGTRAP is blocked in some thread or not at its default action
// already: then a trap would do damage that only they let us undo.
func (sg *signals) sigHooksKept(p *process, pl *planned) {
	if p.sigHooked {
		return
	}
	need := pl.hijacks || p.tramp != 0 || p.trap.handler != sigDfl
	for _, th := range p.threads {
		need = need || th.trapBlocked
	}
	traps := func(bp *breakpoint) bool {
		return len(bp.sites) > 0 || bp.unwinder || bp.hijack != nil || len(bp.enter) > 0 || len(bp.rets) > 0
	}
	for _, bp := range p.bps {
		need = need || traps(bp)
	}
	for _, bp := range pl.bps {
		need = need || traps(bp)
	}
	for a, bp := range pl.bps {
		switch {
		case bp.sigHook == 0:
		case need:
			p.sigHooked = true
		case !traps(bp):
			delete(pl.bps, a)
		}
	}
}
