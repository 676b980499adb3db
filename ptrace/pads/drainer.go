package pads

import (
	"encoding/binary"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/utap/utap/internal/pad"
	"github.com/utap/utap/probe"
)

// drainEvery is how often the drainer reads the rings while records are
// reserved and not yet written, or while the loop holds it; with none, it
// sleeps until a pad wakes it (sleep.go).
const drainEvery = time.Millisecond

// syncPoll is how long the drainer polls the rings after reading records
// when the pads wait for each record's line (Waits.Sync): a call's next
// record comes microseconds after its last, and a sleep and its wake-up
// cost each record about 18 µs on this project's VM.
const syncPoll = 100 * time.Microsecond

// drainBatch bounds the records read under one hold of the lock the loop
// shares: a millisecond's worth.
const drainBatch = 1024

// Drainer reads every ring: its goroutine and the tracer's loop share it
// under mu, which also orders every emit.
type Drainer struct {
	mu    sync.Mutex
	clock *pad.Clock
	sites []*Site // by record site id
	// rings: one per pid, in the order made. A slice: the loop ranges
	// over them a few times per batch, and a map's range (its random
	// start) was 5% of a string trace's drainer.
	rings []*Ring
	lost  uint64 // drops of rings gone
	stop  chan struct{}
	done  chan struct{}
	emit  func(*probe.Event) // the trace's, called under mu only
	// tally: counts per site id instead of events (probe.Target.Tally),
	// for Result.Tallies: no event is made.
	tally  bool
	counts siteCounts
	timed  map[uint32]*timedTally // return sites' tally blocks, by site id
	ev     events                 // the events made of records (events.go)
	ret    pad.Record             // a KindCall record's return (record)
	// held: the loop holds events of a stop not emitted yet; the drainer
	// leaves the rings alone until Release has emitted them in order.
	held atomic.Bool
	// marks: each ring's reservation index at the Hold (under mu).
	marks []ringMark
	// later: stops' events waiting for records before them (later.go).
	later []later
	// mute: the trace is over but the tracer stays: records are read and
	// dropped.
	mute atomic.Bool
	// fsNew: owners of fs bases seen by the loop, for the next drain to
	// take in (owners.go); under fsMu.
	fsMu  sync.Mutex
	fsNew []fsAdd
	// nap: the drainer sleeps on every ring's futex (sleep.go); under mu.
	nap   *nap
	waits Waits // how the rings' pads wait for the drainer (SetWaits)
	// waited: the times pads waited for room, in rings gone.
	waited uint64
	// retMissed: calls whose return was not hijacked, in rings gone.
	retMissed uint64
	// agg: the pads' aggregation tables (agg.go); nil without.
	agg *aggs
	// blk: the threads blocked in a call made in-process (blocked.go).
	blk blockedScan
	// ids: the record sites kept for pads (SiteIDs).
	ids map[any]uint32
}

// New returns a drainer emitting with emit; tally counts instead.
func New(emit func(*probe.Event), tally bool) *Drainer {
	d := &Drainer{emit: emit, tally: tally, ev: events{emit: emit}}
	d.ev.d = d
	return d
}

// Waits says how the pads of a ring wait for the drainer.
type Waits struct {
	// Lossy: a full ring drops (--lossy) instead of making its pad wait.
	Lossy bool
	// Sync: a pad waits after each record until the drainer has read it
	// (pad.Ring.SetSync): the trace's lines go to the terminal the
	// program writes to, and must come before what it prints next.
	Sync bool
	// Woke, with Sync, is told of each drain that read records: each
	// woke the drainer and will wake a pad, a pair of wake-ups as a
	// ptrace stop's (the tracer keeps idle CPUs polling while they come
	// fast).
	Woke func()
	// CPUs: the CPUs the tracer may run on. With more than one, a pad
	// spins a while for its record's line before it sleeps
	// (pad.SyncSpin), and the drainer polls a while after each read
	// (syncPoll): on one, spinning only keeps the other off the CPU.
	CPUs int
}

// spin is the TSC cycles a pad spins for its line (pad.Ring.SetSync).
func (w Waits) spin() uint64 {
	if w.CPUs > 1 {
		return pad.SyncSpin
	}
	return 1
}

// SetWaits sets how the pads of the rings added from now on wait.
func (d *Drainer) SetWaits(w Waits) { d.waits = w }

// Lends takes what the trace's emit promises: it keeps no event (t.Borrow:
// events are reused), it takes a call in one event (t.Pairs), or without
// events (t.Calls).
func (d *Drainer) Lends(t probe.Target) {
	d.ev.borrow, d.ev.pairs = t.Borrow, t.Pairs
	if t.Pairs && t.Calls != nil {
		d.ev.calls, d.ev.timed = t.Calls, t.Calls.Timed()
		d.ev.forms, _ = t.Calls.(probe.CallForms)
	}
	d.ev.lines = t.Lines
}

// Waited is the times pads found a ring full and waited, in rings gone.
func (d *Drainer) Waited() uint64 { return d.waited }

// Tally says whether the pads count rather than record.
func (d *Drainer) Tally() bool { return d.tally }

// SiteIDs is the first of the record site ids kept for key: one pad's
// sites (an entry's and its return's), made by mk the first time,
// numbered in its order. The same key, the same ids, in every process
// image: the pads of one probe at one place in a file, the system call
// pads of one call for one probe. An id a pad in each image made a -f
// trace's sites grow with the commands it saw (libc's 500 system call
// pads: 0.2 MB of tracer heap a command) and a counting trace run out
// of counters after a few dozen images.
func (d *Drainer) SiteIDs(key any, mk func() []*Site) uint32 {
	d.mu.Lock()
	defer d.mu.Unlock()
	if id, ok := d.ids[key]; ok {
		return id
	}
	if d.ids == nil {
		d.ids = map[any]uint32{}
	}
	id := uint32(len(d.sites))
	d.ids[key] = id
	d.sites = append(d.sites, mk()...)
	return id
}

// SysPad says where a system call pad of site id makes its call: the
// `syscall` at pc, where a blocked thread waits (blocked.go).
func (d *Drainer) SysPad(pc uint64, id uint32) {
	d.mu.Lock()
	d.blk.add(pc, id)
	d.mu.Unlock()
}

// Hold keeps the drainer off the rings: the loop holds events of a stop
// that the records after it must not pass.
func (d *Drainer) Hold() {
	if d.held.Load() {
		return
	}
	// Where each ring's reservations stand now, at the stop: every
	// record the stopped thread made is below its mark, whatever the
	// clocks say (a TSC converted to ns is off by microseconds early on).
	d.mu.Lock()
	d.marks = d.marks[:0]
	for _, r := range d.rings {
		d.marks = append(d.marks, ringMark{r, r.r.Reserved()})
	}
	d.held.Store(true)
	d.mu.Unlock()
}

// ringMark is a ring's reservation index at a Hold.
type ringMark struct {
	r  *Ring
	at uint64
}

// Mute drops the records from now on.
func (d *Drainer) Mute() {
	d.aggMute()
	d.mute.Store(true)
}

// Lost is the records the full rings dropped.
func (d *Drainer) Lost() uint64 { return d.lost }

// start runs the drainer once the first ring exists: events flow while
// the loop sleeps in wait4.
func (d *Drainer) start() {
	if d.stop != nil {
		return
	}
	d.clock = pad.NewClock()
	d.stop, d.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(d.done)
		// At the tracees' priority, not above: ahead of them it took
		// the CPU from them and from the loop, whose stops (a thread's
		// start) they wait for.
		wait := drainEvery
		var read time.Time // Sync: when a drain last read records
		for {
			// wait < 0: a full batch, more is there: on at once (the
			// lock was let go between, for the loop).
			if wait == 0 {
				if d.sleep() {
					return
				}
			} else if wait > 0 {
				select {
				case <-d.stop:
					return
				case <-time.After(wait):
				}
			} else {
				select {
				case <-d.stop:
					return
				default:
				}
				if d.waits.Sync {
					runtime.Gosched() // polling: the loop may want the lock
				}
			}
			n, idle, behind := 0, false, false
			d.mu.Lock()
			for _, r := range d.rings {
				r.r.Beat() // pads waiting for room wait on while it moves
			}
			if !d.held.Load() {
				d.clock.Update()
				// Records past a waiting stop wait for its events.
				if d.catchUp(nil, false) {
					n = d.drainSome(drainBatch)
					var open bool
					behind, open = anyBehind(d.rings)
					idle = n == 0 && !behind
					if !behind && !open { // caught up: a blocked thread's earlier records are all read
						d.blk.scan(d)
					}
				}
			}
			d.mu.Unlock()
			if n > 0 && d.waits.Sync {
				read = time.Now()
				if d.waits.Woke != nil {
					d.waits.Woke()
				}
			}
			// Behind the pads (records reserved past the last read: a
			// batch's bound, or a record being written), read again at
			// once: a timer there let the pads fill the ring and wait
			// for room, and the wake-ups churned the scheduler on the
			// CPU the program needs. Caught up with a few records, wait
			// a millisecond: a program calling now and then is not
			// made to wake the drainer per record (a futex call each),
			// and lines still reach a terminal within it. Idle, sleep
			// until a pad commits a record (sleep). The lock is
			// released between batches, for the loop (a thread's first
			// stop, a hit's events) to take it. With the pads waiting
			// for each record's line (Waits.Sync), the next record comes
			// only once this one's pad goes on: poll for it a while (its
			// pad spins as long, pad.emitSync), then sleep until a pad
			// commits one.
			switch {
			case behind || n >= drainBatch/4:
				wait = -1
			case d.waits.Sync && d.waits.CPUs > 1 && time.Since(read) < syncPoll:
				wait = -1
			case idle || d.waits.Sync:
				wait = 0
			default:
				wait = drainEvery
			}
		}
	}()
}

// anyBehind says whether a ring holds records reserved past its tail
// (behind), or only an Open one left to its return pad (open: the
// drainer waits a while for it).
func anyBehind(rings []*Ring) (behind, open bool) {
	for _, r := range rings {
		switch {
		case r.r.Reserved() == r.r.Tail():
		case r.r.AtOpen():
			open = true
		default:
			return true, open
		}
	}
	return false, open
}

// Halt stops the drainer; the rings gone are drained by Gone.
func (d *Drainer) Halt() {
	d.aggHalt()
	if d.stop != nil {
		close(d.stop)
		d.mu.Lock()
		d.wake()
		d.mu.Unlock()
		<-d.done
		d.stop = nil
	}
	d.mu.Lock()
	d.catchUp(nil, true) // the trace is over: emit what is left
	d.mu.Unlock()
}

// drainSome drains at most max records of each ring, and returns the
// records read.
func (d *Drainer) drainSome(max int) int {
	d.takeIn()
	n := 0
	for _, r := range d.rings {
		n += r.r.DrainBatch(min(r.head, r.r.Tail()+uint64(max)), r.records(d))
	}
	return n
}

// drainAll turns every committed record into its event and emits it,
// and returns the records read.
func (d *Drainer) drainAll() int {
	d.takeIn()
	n := 0
	for _, r := range d.rings {
		n += r.r.DrainUpTo(r.head, r.records(d))
	}
	return n
}

// record emits the event of one record.
//
// A record that goes nowhere lets a kept entry (calls.go) go first: the
// ring reads the next record into the kept one's place (pad.Ring's two).
func (d *Drainer) record(r *Ring, rec *pad.Record) {
	if d.ev.lines != nil && !d.ev.holding {
		d.ev.holding = true // released by the drain's end (events.end)
		d.ev.lines.Hold()
	}
	if rec.Kind == pad.KindCall {
		d.callRecord(r, rec)
		return
	}
	if int(rec.Site) >= len(d.sites) || d.emit == nil || d.mute.Load() {
		d.ev.unhold(d)
		return
	}
	pid, tid, ok := r.whose(rec)
	if !ok || d.tally {
		d.ev.unhold(d)
		if ok {
			d.counts.add(rec.Site, 1)
		}
		return
	}
	s, tid := d.sites[rec.Site], r.thread(rec, tid)
	if d.ev.calls != nil && d.ev.call(d, r, rec, s, pid, tid) {
		return
	}
	d.event(r, rec, s, pid, tid)
}

// callRecord emits a call in one record (pad.Spec.Open): straight to the
// CallWriter when it takes it (events.oneRecord), else as its entry's
// record, then its return's, as their pads write them otherwise.
func (d *Drainer) callRecord(r *Ring, rec *pad.Record) {
	n := 0
	if rs := int(rec.Site) + 1; rs < len(d.sites) {
		if d.ev.calls != nil && !d.tally && d.emit != nil && !d.mute.Load() {
			if pid, tid, ok := r.whose(rec); ok && d.ev.oneRecord(r, rec, d.sites[rec.Site], d.sites[rs], pid, r.thread(rec, tid)) {
				return
			}
		}
		n = d.sites[rs].recorded()
	}
	rec.SplitCall(&d.ret, n)
	d.record(r, rec)
	// The lane kept the entry: the return is its thread's, past
	// the checks the entry passed, straight to the pairing.
	if h := &d.ev.held; h.rec == rec && int(d.ret.Site) < len(d.sites) {
		if s := d.sites[d.ret.Site]; !d.ev.call(d, r, &d.ret, s, h.pid, h.tid) {
			d.event(r, &d.ret, s, h.pid, h.tid)
		}
		return
	}
	d.record(r, &d.ret)
}

// whose says whose record rec is: its process, and its thread when a
// vfork child's (else 0: thread says); false: it goes nowhere (the ring
// quiet, a vfork child not followed).
func (r *Ring) whose(rec *pad.Record) (pid, tid int, ok bool) {
	if r.Quiet {
		return 0, 0, false
	}
	if len(r.vforks) > 0 {
		if w := r.vforkOf(rec); w != nil {
			// A vfork child not followed: not the parent's call.
			return w.pid, w.pid, w.report
		}
	}
	return r.Pid, 0, true
}

// thread is the thread whose record rec is (tid, when whose said).
func (r *Ring) thread(rec *pad.Record, tid int) int {
	if tid != 0 {
		return tid
	}
	// Consecutive records mostly come from one thread: the last answer
	// saves a map lookup.
	if !r.lastOK || rec.FS != r.lastFS {
		t := r.Pid // a thread whose fs base utap did not see (set by arch_prctl since)
		o := r.fs.owner(rec.FS, rec.Index)
		if o != nil {
			t = o.tid
		}
		// Only the newest owner holds for the records after this one.
		r.lastFS, r.lastTID, r.lastOK = rec.FS, t, o == nil || o == r.fs[rec.FS]
	}
	return r.lastTID
}

// event makes and emits the event of rec, of site s, thread tid of pid.
func (d *Drainer) event(r *Ring, rec *pad.Record, s *Site, pid, tid int) {
	pe := d.ev.next()
	pe.ev.TimeNs, pe.ev.PID, pe.ev.TID = r.at(d.clock, rec.TSC), pid, tid
	pe.ev.Probe, pe.ev.Func, pe.ev.Kind, pe.ev.ProbeIndex = s.Probe, s.Func, "entry", s.Index
	if rec.Kind == pad.KindReturn {
		returnOf(pe, rec, s, d.clock)
	}
	if s.Sys != nil {
		d.blk.returned(tid)
		s.Sys.event(pe, rec)
		if len(rec.Sys) >= pad.SysHead {
			// The call's duration, TSC ticks the pad took around it.
			ticks := binary.LittleEndian.Uint64(rec.Sys[pad.SysTicksOff:])
			if ticks < rec.TSC {
				pe.ev.DurationNs = max(d.clock.Nanos(rec.TSC)-d.clock.Nanos(rec.TSC-ticks), 0)
			}
		}
	}
	if len(s.Fetches) > 0 {
		pe.ev.Args = d.ev.values(pe.args[:0], s, rec, false)
	}
	d.ev.put(pe)
}

// siteCounts is a Tally trace's counts, per site id.
type siteCounts []uint64

// add adds n to site id's count.
func (c *siteCounts) add(id uint32, n uint64) {
	for int(id) >= len(*c) {
		*c = append(*c, 0)
	}
	(*c)[id] += n
}

// Tallies are the counts of a Tally trace, per site.
func (d *Drainer) Tallies() []probe.Tally {
	var out []probe.Tally
	for id, n := range d.counts {
		if n == 0 {
			continue
		}
		s := d.sites[id]
		out = append(out, probe.Tally{Probe: s.Probe, Func: s.Func, Kind: probe.Entry, Hits: n})
	}
	return append(out, d.timedTallies()...)
}
