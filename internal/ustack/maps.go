//go:build linux && amd64

// Package ustack walks and names user stacks for -k: the ptrace engine's
// unwinder (DWARF CFI from each object's .eh_frame, frame pointers where no
// FDE covers a pc) and the per-process maps both it and the CLI's
// symbolizer (elfsym.Symbolizer) look addresses up in.
package ustack

import (
	"sort"
	"sync"

	"github.com/utap/utap/internal/proc"
)

// Maps caches /proc/PID/maps per process, read again when an address falls
// in no cached mapping (a library loaded since) or after Forget (exec).
// Safe for concurrent use.
type Maps struct {
	mu   sync.Mutex
	pids map[int][]proc.Mapping // sorted by Start
}

// Forget drops pid's cached maps (after an exec, a dlopen or dlclose).
func (c *Maps) Forget(pid int) {
	c.mu.Lock()
	delete(c.pids, pid)
	c.mu.Unlock()
}

// Find returns pid's mapping holding addr, reading the maps again once if
// the cached ones have none. A process gone keeps its last maps.
func (c *Maps) Find(pid int, addr uint64) (proc.Mapping, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if m, ok := find(c.pids[pid], addr); ok {
		return m, true
	}
	ms, err := proc.Maps(pid)
	if err != nil {
		return proc.Mapping{}, false
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Start < ms[j].Start })
	if c.pids == nil {
		c.pids = map[int][]proc.Mapping{}
	}
	c.pids[pid] = ms
	return find(ms, addr)
}

func find(ms []proc.Mapping, addr uint64) (proc.Mapping, bool) {
	i := sort.Search(len(ms), func(i int) bool { return ms[i].End > addr })
	if i < len(ms) && ms[i].Start <= addr {
		return ms[i], true
	}
	return proc.Mapping{}, false
}
