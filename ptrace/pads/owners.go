package pads

// A record names its thread by fs base, and glibc gives a new thread the
// TCB (so the fs base) of a dead one. Each fs base has its owners, newest
// first, each from the ring index reserved next when it was seen: the new
// thread is stopped then and has written nothing, the dead one wrote
// everything below. A record is its thread's by its index, whenever it
// is drained: no drain at a thread's start (the loop used to drain the
// whole ring there, tens of milliseconds under a flood of records, for
// every thread a program started).

// owner is the thread with an fs base from record index from on.
type owner struct {
	tid  int
	from uint64
	prev *owner // the owner before, kept while its records may be unread
}

// Owners is a process's fs bases and their owners.
type Owners map[uint64]*owner

// add makes tid the owner of fs from index head on; tail is the ring's
// read index: owners before one whose records start below it are gone.
func (m Owners) add(fs uint64, tid int, head, tail uint64) {
	o := &owner{tid: tid, from: head, prev: m[fs]}
	m[fs] = o
	for ; o != nil; o = o.prev {
		if o.from <= tail {
			o.prev = nil
			break
		}
	}
}

// owner is the owner of fs when record index was written, nil if none.
func (m Owners) owner(fs, index uint64) *owner {
	for o := m[fs]; o != nil; o = o.prev {
		if index >= o.from {
			return o
		}
	}
	return nil
}

// fsAdd is an owner the loop saw, for the drains to add (takeIn).
type fsAdd struct {
	ring *Ring
	fs   uint64
	tid  int
	head uint64
}

// SeeFS records tid's fs base, seen stopped before it can run a pad, in
// owners, the process's, whose ring is r (nil before the first).
func (d *Drainer) SeeFS(r *Ring, owners Owners, fs uint64, tid int) {
	if r == nil || r.r == nil {
		d.mu.Lock()
		owners.add(fs, tid, 0, 0)
		d.mu.Unlock()
		return
	}
	// Not under mu, which the drainer may hold for a batch: the drains
	// take it in before their next records.
	d.fsMu.Lock()
	d.fsNew = append(d.fsNew, fsAdd{ring: r, fs: fs, tid: tid, head: r.r.Reserved()})
	d.fsMu.Unlock()
}

// takeIn adds the owners the loop saw; under mu, before a drain, which
// reads no record at or above the head each ring had as takeIn began
// (Ring.head). Heads first, then owners: a thread seen after the heads
// were read has written nothing below them; one seen before is taken
// in. The other way round, a thread seen and resumed between the two had
// its first records read with no owner (its process's pid for a tid, 1
// run in 10 of TestPadThreadReuse).
func (d *Drainer) takeIn() {
	for _, r := range d.rings {
		r.head = r.r.Reserved()
	}
	d.fsMu.Lock()
	adds := d.fsNew
	d.fsNew = nil
	d.fsMu.Unlock()
	for _, a := range adds {
		a.ring.fs.add(a.fs, a.tid, a.head, a.ring.r.Tail())
		a.ring.lastOK = false
	}
}
