//go:build linux && amd64

// Package ustack walks and names user stacks for -k: the ptrace engine's
// unwinder (DWARF CFI from each object's .eh_frame, frame pointers where no
// FDE covers a pc) and the per-process maps both it and the CLI's
// symbolizer (elfsym.Symbolizer) look addresses up in.
package ustack

import (
	"errors"
	"sort"
	"sync"

	"github.com/utap/utap/internal/proc"
)

// Maps caches /proc/PID/maps per process, read again when an address falls
// in no cached mapping (a library loaded since) or after Forget (exec).
// An address still in none after a fresh read (a stray frame of code
// without frame pointers) is remembered, so that it costs no further
// read at every event. Safe for concurrent use.
type Maps struct {
	mu     sync.Mutex
	pids   map[int][]proc.Mapping // sorted by Start
	misses map[int]map[uint64]bool
}

// maxMisses bounds the addresses remembered as in no mapping, per process.
const maxMisses = 4096

// Forget drops pid's cached maps (after an exec, a dlopen or dlclose).
func (c *Maps) Forget(pid int) {
	c.mu.Lock()
	delete(c.pids, pid)
	delete(c.misses, pid)
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
	if c.misses[pid][addr] {
		return proc.Mapping{}, false
	}
	ms, err := readMaps(pid)
	if err != nil {
		return proc.Mapping{}, false
	}
	if c.pids == nil {
		c.pids, c.misses = map[int][]proc.Mapping{}, map[int]map[uint64]bool{}
	}
	c.pids[pid] = ms
	m, ok := find(ms, addr)
	if !ok {
		if len(c.misses[pid]) >= maxMisses || c.misses[pid] == nil {
			c.misses[pid] = map[uint64]bool{}
		}
		c.misses[pid][addr] = true
	}
	return m, ok
}

func find(ms []proc.Mapping, addr uint64) (proc.Mapping, bool) {
	i := sort.Search(len(ms), func(i int) bool { return ms[i].End > addr })
	if i < len(ms) && ms[i].Start <= addr {
		return ms[i], true
	}
	return proc.Mapping{}, false
}

// The maps of every process as last read, by any Maps: a process that
// exited before its events were named (the uprobe engine reads its ring
// after the fact) is named by the maps it had. Remember takes them while
// the process lives (at exec, once its libraries are loaded).
var last struct {
	sync.Mutex
	pids map[int][]proc.Mapping
}

// maxRemembered bounds the processes whose maps are kept.
const maxRemembered = 4096

// Remember reads pid's maps now, for when it is gone.
func Remember(pid int) { readMaps(pid) }

// readMaps reads pid's maps sorted by Start and remembers them; a
// process gone gives those last read.
func readMaps(pid int) ([]proc.Mapping, error) {
	ms, err := proc.Maps(pid)
	last.Lock()
	defer last.Unlock()
	if err != nil || len(ms) == 0 { // a zombie's maps are empty
		if old, ok := last.pids[pid]; ok {
			return old, nil
		}
		if err == nil {
			err = errNoMaps
		}
		return nil, err
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Start < ms[j].Start })
	if last.pids == nil || len(last.pids) >= maxRemembered {
		last.pids = map[int][]proc.Mapping{}
	}
	last.pids[pid] = ms
	return ms, nil
}

var errNoMaps = errors.New("no mappings")
