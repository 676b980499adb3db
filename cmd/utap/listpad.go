//go:build linux && amd64

package main

import (
	"strings"

	"github.com/utap/utap/elfsym"
	"github.com/utap/utap/ptrace"
	"github.com/utap/utap/ssol"
)

// listedPad is a listed symbol with whether its entry can take the ptrace
// engine's in-process pad: the instructions a jump there would displace
// (the probe's own needs, such as a return probe or a stack, are
// the trace's to say: utap run -v).
type listedPad struct {
	elfsym.Symbol
	Pad    bool   `json:"pad"`
	PadWhy string `json:"pad_why,omitempty"`
}

// padEntries says, for each listed symbol, whether its entry takes a pad.
func padEntries(syms []elfsym.Symbol) []listedPad {
	out := make([]listedPad, len(syms))
	for i, s := range syms {
		out[i].Symbol = s
		out[i].Pad, out[i].PadWhy = padEntry(s)
	}
	return out
}

func padEntry(s elfsym.Symbol) (bool, string) {
	switch {
	case s.Kind == "usdt":
		return false, "a static probe is inside a function: it keeps a breakpoint"
	case s.Kind == "plt":
		return false, "a PLT stub (an indirect jump): it keeps a breakpoint"
	case s.Kind == "ifunc":
		return false, "an IFUNC: the implementation the loader picks decides (utap run -v)"
	case s.Go:
		return false, "a Go function: it keeps a breakpoint"
	case s.Size == 0:
		return false, "the function's size is unknown"
	}
	code, err := elfsym.Code(s.Object, s.Addr, s.Size)
	if err != nil {
		return false, err.Error()
	}
	land, err := elfsym.ObjectLandings(s.Object)
	if err != nil {
		return false, err.Error()
	}
	if _, err := ssol.PlanEntry(code, s.Addr, land.Has, ptrace.FileBefore(s.Object, s.Addr, land)); err != nil {
		why := err.Error()
		if _, after, ok := strings.Cut(why, ": "); ok {
			why = after // the address is the row's
		}
		return false, why
	}
	return true, ""
}
