//go:build linux && amd64

package main

import (
	"sync"
	"sync/atomic"

	"github.com/utap/utap/probe"
)

// enumNamer names the values whose prototype type is an enumeration
// (setlocale(LC_ALL, "")): the engines report numbers, and the sites,
// known here, say which fetch has which names.
type enumNamer struct {
	mu  sync.Mutex
	by  map[enumKey][]probe.Enum // by probe and function: each fetch's names, nil where none
	any atomic.Bool              // by has one: most traces have none, and name is per event
}

type enumKey struct {
	probe int
	fn    string
}

// add learns the sites' enumerations (at start, and at each re-resolve).
func (n *enumNamer) add(sites []probe.Site) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for i := range sites {
		s := &sites[i]
		var enums []probe.Enum
		for j, f := range s.Fetches {
			if f.Enum != nil {
				if enums == nil {
					enums = make([]probe.Enum, len(s.Fetches))
				}
				enums[j] = f.Enum
			}
		}
		if enums != nil {
			if n.by == nil {
				n.by = map[enumKey][]probe.Enum{}
			}
			n.by[enumKey{s.Probe, s.Func}] = enums
			n.any.Store(true)
		}
	}
}

// has says whether function fn's values of probe index probe have names.
func (n *enumNamer) has(probe int, fn string) bool {
	if !n.any.Load() {
		return false
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.by[enumKey{probe, fn}] != nil
}

// name sets Value.Name on the event's values that have one.
func (n *enumNamer) name(ev *probe.Event) {
	if !n.any.Load() || len(ev.Args) == 0 {
		return
	}
	n.mu.Lock()
	enums := n.by[enumKey{ev.ProbeIndex, ev.Func}]
	n.mu.Unlock()
	for i := range ev.Args {
		if i < len(enums) && enums[i] != nil {
			if name, ok := enums[i][int64(ev.Args[i].Int)]; ok && !ev.Args[i].Err && !ev.Args[i].IsStr {
				ev.Args[i].Name = name
			}
		}
	}
}
