package uretprobe

import (
	"fmt"

	"github.com/utap/utap/probe"
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
}

// PlanReturn plans the return probe of site, whose function starts at
// address start (runtime or link-time: the plan's addresses are in the same
// terms). code returns the function's whole body (site.FuncSize bytes from
// start), as the engine reads it; it is called only for RET probes.
func PlanReturn(site *probe.Site, start uint64, code func() ([]byte, error), opt Options) (Plan, error) {
	p := Plan{Method: Strategy(site, opt.ShadowStack), Entry: start}
	if opt.RetProbes {
		p.Method = RetProbes
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
