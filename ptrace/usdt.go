//go:build linux && amd64

package ptrace

import (
	"encoding/binary"
	"fmt"

	"github.com/utap/utap/probe"
)

// USDT semaphores. A static probe with a semaphore is skipped by its
// program (if (sem) ...) until a tracer increments the 2-byte counter: a
// process gets one increment per semaphore while any of its probes is in,
// and the same decrement when they come out, so that a process detached
// runs on with its counters as they were. Several sites may share one
// semaphore; p.sems counts it once.

// semPlan is where s's semaphore is in the process being planned, whose
// breakpoint for s is at addr: link-time address plus the object's load
// bias (addr - s.Addr), or, with only a file offset, through the mapping
// of the object that holds it. 0: none, or not mapped.
func (pl *planner) semPlan(s *probe.Site, addr uint64) uint64 {
	if !s.USDT {
		return 0
	}
	if s.Semaphore != 0 {
		return addr - s.Addr + s.Semaphore
	}
	if s.SemaphoreOffset == 0 {
		return 0
	}
	is := pl.objs[s.Object] // set by pl.addr for this site
	for _, m := range pl.ms {
		// Any mapping of the file: the counter is in a writable data
		// segment, not in the code that MappingOf looks for.
		if is != nil && m.Holds(s.SemaphoreOffset) && is(m) {
			return m.AddrOf(s.SemaphoreOffset)
		}
	}
	return 0
}

// addSem records the semaphore at runtime address at, of the object obj
// (that of the probe's code: the semaphore goes with it at a dlclose).
func (pl *planner) addSem(at uint64, obj object) {
	if at == 0 {
		return
	}
	if pl.sems == nil {
		pl.sems = map[uint64]object{}
	}
	pl.sems[at] = obj
}

// semsUp increments the semaphores of sems that p has not incremented
// yet. p's threads are stopped.
func (ld *loader) semsUp(p *process, sems map[uint64]object) error {
	for at, obj := range sems {
		if _, ok := p.sems[at]; ok {
			continue
		}
		if err := addSem(p, at, 1); err != nil {
			return fmt.Errorf("pid %d: USDT semaphore: %w", p.pid, err)
		}
		if p.sems == nil {
			p.sems = map[uint64]object{}
		}
		p.sems[at] = obj
	}
	return nil
}

// semsDown takes back every increment of p, in p's memory (a fork child's
// own, holding the parent's increments). Errors are ignored, as for the
// breakpoints' bytes: the process may be on its way out.
func semsDown(p *process) {
	for at := range p.sems {
		addSem(p, at, -1)
	}
}

// semsGone forgets the semaphores of objects no longer mapped (dlclose):
// their addresses may hold other data by now.
func semsGone(p *process, now map[object]bool) {
	for at, obj := range p.sems {
		if !now[obj] {
			delete(p.sems, at)
		}
	}
}

// addSem adds d to the counter at at, read and written through
// /proc/PID/mem as the breakpoints are (the page may be copy-on-write).
func addSem(p *process, at uint64, d int) error {
	var b [2]byte
	if err := p.mem.ReadByMem(b[:], at); err != nil {
		return err
	}
	v := binary.LittleEndian.Uint16(b[:])
	binary.LittleEndian.PutUint16(b[:], v+uint16(d))
	return p.mem.WriteAt(b[:], at)
}
