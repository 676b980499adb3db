//go:build linux && amd64

package ptrace

// A record names its thread by fs base, and glibc gives a new thread the
// TCB (so the fs base) of a dead one. Each fs base has its owners, newest
// first, each from the ring index reserved next when it was seen: the new
// thread is stopped then and has written nothing, the dead one wrote
// everything below. A record is its thread's by its index, whenever it
// is drained: no drain at a thread's start (the loop used to drain the
// whole ring there, tens of milliseconds under a flood of records, for
// every thread a program started).

// fsOwner is the thread with an fs base from record index from on.
type fsOwner struct {
	tid  int
	from uint64
	prev *fsOwner // the owner before, kept while its records may be unread
}

// fsOwners is a process's fs bases and their owners.
type fsOwners map[uint64]*fsOwner

// add makes tid the owner of fs from index head on; tail is the ring's
// read index: owners before one whose records start below it are gone.
func (m fsOwners) add(fs uint64, tid int, head, tail uint64) {
	o := &fsOwner{tid: tid, from: head, prev: m[fs]}
	m[fs] = o
	for ; o != nil; o = o.prev {
		if o.from <= tail {
			o.prev = nil
			break
		}
	}
}

// owner is the owner of fs when record index was written, nil if none.
func (m fsOwners) owner(fs, index uint64) *fsOwner {
	for o := m[fs]; o != nil; o = o.prev {
		if index >= o.from {
			return o
		}
	}
	return nil
}

// fsAdd is an owner the loop saw, for the drains to add (fsTakeIn).
type fsAdd struct {
	ring *padRing
	fs   uint64
	tid  int
	head uint64
}

// fsTakeIn adds the owners the loop saw; under mu, before a drain: a
// drain reads records below the head it finds as it starts, no higher
// than the head these were seen at, so none of their threads' records.
func (ps *pads) fsTakeIn() {
	ps.fsMu.Lock()
	adds := ps.fsNew
	ps.fsNew = nil
	ps.fsMu.Unlock()
	for _, a := range adds {
		a.ring.fs.add(a.fs, a.tid, a.head, a.ring.r.Tail())
		a.ring.lastOK = false
	}
}
