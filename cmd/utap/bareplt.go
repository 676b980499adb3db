//go:build linux && amd64

package main

import (
	"errors"
	"fmt"

	"github.com/utap/utap/elfsym"
	"github.com/utap/utap/probe"
)

// ltrace's -e malloc traces the program's calls to malloc: a bare name
// the program does not define but calls through its PLT is read that
// way (SYM@plt, as -E SYM), with a note, rather than refused; libc:malloc
// still traces every call, from anywhere.

// pltFallback retries the bare specs that match nothing in the program
// as its PLT calls; it reports whether one was changed (resolve again).
func (r *resolver) pltFallback(specs []*probe.Spec, t elfsym.Target, err error) bool {
	if !errors.Is(err, elfsym.ErrNoSymbol) {
		return false
	}
	changed := false
	for _, s := range specs {
		if s.Optional || !barePLTCandidate(s) {
			continue
		}
		if _, err := elfsym.Resolve([]*probe.Spec{s}, t); !errors.Is(err, elfsym.ErrNoSymbol) {
			continue
		}
		plt := *s
		plt.Symbol = s.Symbol + "@plt"
		if _, err := elfsym.Resolve([]*probe.Spec{&plt}, t); err != nil {
			continue
		}
		sym := s.Symbol
		for _, o := range specs { // its return twin too
			if o.Object == "" && o.Symbol == sym {
				o.Symbol = sym + "@plt"
			}
		}
		r.mu.Lock()
		r.notes = append(r.notes, fmt.Sprintf("%q: the program does not define %s: traced as ltrace -e %s does, its calls through the PLT (libc:%s traces every call)", s.Text, sym, sym, sym))
		r.mu.Unlock()
		changed = true
	}
	return changed
}

// barePLTCandidate: a plain name with no object, not a pattern, not a
// system call or static probe.
func barePLTCandidate(s *probe.Spec) bool {
	if s.Object != "" || s.Syscall || s.Provider != "" || s.Symbol == "" || s.Offset != 0 || s.Address != 0 {
		return false
	}
	for _, c := range s.Symbol {
		if c == '*' || c == '?' || c == '[' || c == '@' {
			return false
		}
	}
	return true
}
