//go:build linux && amd64

package main

import (
	"debug/elf"
	"errors"
	"strings"

	"github.com/utap/utap/elfsym"
	"github.com/utap/utap/ssol"
)

// listedPad is a listed symbol with whether its entry can take the ptrace
// engine's in-process pad: the instructions a jump there would displace
// (the probe's own needs, such as a return probe or a memory read, are
// the trace's to say: utap run -v).
type listedPad struct {
	elfsym.Symbol
	Pad    bool   `json:"pad"`
	PadWhy string `json:"pad_why,omitempty"`
}

// padEntries says, for each listed symbol, whether its entry takes a pad,
// reading each object once.
func padEntries(syms []elfsym.Symbol) []listedPad {
	files := map[string]*elf.File{}
	defer func() {
		for _, f := range files {
			if f != nil {
				f.Close()
			}
		}
	}()
	out := make([]listedPad, len(syms))
	for i, s := range syms {
		out[i].Symbol = s
		out[i].Pad, out[i].PadWhy = padEntry(files, s)
	}
	return out
}

func padEntry(files map[string]*elf.File, s elfsym.Symbol) (bool, string) {
	switch s.Kind {
	case "usdt":
		return false, "a static probe is inside a function: it keeps a breakpoint"
	case "plt":
		return false, "a PLT stub (an indirect jump): it keeps a breakpoint"
	case "ifunc":
		return false, "an IFUNC: the implementation the loader picks decides (utap run -v)"
	}
	if s.Size == 0 {
		return false, "the function's size is unknown"
	}
	f, ok := files[s.Object]
	if !ok {
		f, _ = elf.Open(s.Object)
		files[s.Object] = f
	}
	if f == nil {
		return false, "the object cannot be read"
	}
	if f.Section(".gopclntab") != nil {
		return false, "a Go function: it keeps a breakpoint"
	}
	code, err := funcCode(f, s.Addr, s.Size)
	if err != nil {
		return false, err.Error()
	}
	if _, err := ssol.PlanPad(code, s.Addr, s.Addr, nil); err != nil {
		why := err.Error()
		if _, after, ok := strings.Cut(why, ": "); ok {
			why = after // the address is the row's
		}
		return false, why
	}
	return true, ""
}

// funcCode reads a function's bytes from its object's load segments.
func funcCode(f *elf.File, addr, size uint64) ([]byte, error) {
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && addr >= p.Vaddr && addr+size <= p.Vaddr+p.Filesz {
			b := make([]byte, size)
			_, err := p.ReadAt(b, int64(addr-p.Vaddr))
			return b, err
		}
	}
	return nil, errors.New("the function is not in a load segment")
}
