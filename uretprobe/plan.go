package uretprobe

import (
	"fmt"

	"github.com/utap/utap/internal/x86"
	"github.com/utap/utap/probe"
	"golang.org/x/arch/x86/x86asm"
)

// Plan is where a function's return probe goes, for either engine.
type Plan struct {
	Method Method
	// Entry is where the call is seen to start: the function's start, or
	// for Go (RetProbes) the instruction after its stack-split prologue.
	Entry uint64
	// Rets are the function's RET instructions (RetProbes only).
	Rets []uint64
}

// Options are what an engine knows that changes the method.
type Options struct {
	// ShadowStack: the process runs with the CET shadow stack, on which a
	// hijacked return faults (the ptrace engine; the kernel keeps the
	// shadow stack right for its own uretprobes).
	ShadowStack bool
	// RetProbes: probe every RET whatever Strategy says (the uprobe engine
	// when an unwinder is linked: see UsesUnwinder).
	RetProbes bool
	// NestLimit: hijacked returns nest only so deep (the kernel keeps 64
	// uretprobes a thread), so a function that calls itself gets RET
	// probes, which see every return of a deep recursion.
	NestLimit bool
}

// PlanReturn plans the return probe of site, whose function starts at
// address start (runtime or link-time: the plan's addresses are in the same
// terms). code returns the function's whole body (site.FuncSize bytes from
// start), as the engine reads it; it is called only for RET probes.
func PlanReturn(site *probe.Site, start uint64, code func() ([]byte, error), opt Options) (Plan, error) {
	if why := NoReturnProbe(site.Func); why != "" {
		return Plan{}, fmt.Errorf("%w: %s: %s; probe its entry", ErrRefused, site.Func, why)
	}
	p := Plan{Method: Strategy(site, opt.ShadowStack), Entry: start}
	if opt.RetProbes {
		p.Method = RetProbes
	}
	if p.Method == Hijack && opt.NestLimit && site.FuncSize > 0 {
		if b, err := code(); err == nil && len(b) >= int(site.FuncSize) && callsItself(b, start) {
			if rets, err := RetSites(b, start); err == nil && len(rets) > 0 {
				p.Method, p.Rets = RetProbes, rets
				return p, nil
			}
		}
	}
	if p.Method == Hijack {
		return p, nil
	}
	if site.FuncSize == 0 {
		return p, fmt.Errorf("%w: %s's size is unknown, so its RET instructions cannot be found", ErrRefused, site.Func)
	}
	body, err := code()
	if err != nil {
		return p, fmt.Errorf("reading %s's code: %w", site.Func, err)
	}
	if len(body) < int(site.FuncSize) {
		return p, fmt.Errorf("%w: %s is cut short in %s", ErrRefused, site.Func, site.Object)
	}
	if p.Rets, err = RetSites(body, start); err != nil {
		return p, err
	}
	if len(p.Rets) == 0 {
		return p, fmt.Errorf("%w: %s has no RET instruction (it only tail-calls or never returns)", ErrRefused, site.Func)
	}
	if site.GoFunc {
		if p.Entry, err = GoEntry(body, start); err != nil {
			return p, err
		}
	}
	return p, nil
}

// callsItself says whether the function whose body is code, at address
// start, calls its own start directly (a recursion). A body it cannot
// decode says no.
func callsItself(code []byte, start uint64) bool {
	for off := 0; off < len(code); {
		inst, err := x86.Decode(code[off:])
		if err != nil {
			return false
		}
		off += inst.Len
		if rel, ok := inst.Args[0].(x86asm.Rel); ok && inst.Op == x86asm.CALL && int64(start)+int64(off)+int64(rel) == int64(start) {
			return true
		}
	}
	return false
}
