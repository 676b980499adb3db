package pad

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/utap/utap/probe"
)

// The ring is a memfd mapped shared by the tracee's pads (producers, any
// number of threads) and the tracer (the one consumer). Its first page is
// the header; records follow, RecSize bytes each.
//
// A producer reserves index i by moving head from i to i+1 (cmpxchg) only
// while head - tail < n, the reader's published tail: a reserved slot is
// always free. A full ring makes the producer wait (record.go, emitFull),
// on a futex the reader bumps once it frees records while someone waits;
// with OffLossy set (--lossy) it drops there instead, counted, reserving
// nothing. A pad that finds the tracer's heartbeat still for about a
// second takes it for dead: it sets OffGaveUp and full rings drop from
// then on, so a dead tracer leaves a process that runs on, dropping.
//
// A record's first word, seq, carries the protocol (after Vyukov's bounded
// queue): for record index i in slot s = i%n, seq == i means free for i,
// i|busy claimed by i's producer, i+1 committed. The word holds seq-s, so
// that a new memfd's zeros are every slot free for its first index:
// nothing to initialise, and pages are touched only as records reach
// them. A producer claims its slot with cmpxchg(seq, i → i|busy); a claim
// fails only when the reader has passed the record as lost (its producer
// stopped between its two atomics longer than grace): it drops the event,
// counts it and leaves a mark so the reader can skip the hole. The reader
// frees a slot by storing i+n.
//
// The reader sleeps when every ring is empty: it sets OffSleep, looks at
// head once more, and waits on that futex; a pad reads the flag after its
// reservation and, finding it set, takes it and wakes the reader once.
const (
	HeaderSize = 4096
	RecSize    = 64
	// MaxValues is the fetched values a record holds; a site wanting more
	// keeps its breakpoint.
	MaxValues = 4

	// Header offsets, each word on its own cache line.
	OffHead  = 0   // next record index to reserve (producers' xadd)
	OffDrops = 64  // events dropped by producers (lock inc)
	OffTail  = 128 // the reader's next index, published after each drain
	// OffDivert, when not 0, makes a counting pad write a record instead
	// of adding to its counter: while a vfork child runs in the process's
	// memory, only a record (its fs base, its index) tells whose call it
	// was (the tracer's vfork windows).
	OffDivert = 192
	// OffWaiters is the pads waiting for room (record.go); OffRoom the
	// futex they wait on, bumped by the reader when it frees records
	// while one waits. OffWaited counts the waits.
	OffWaiters = 256
	OffRoom    = 320
	OffWaited  = 384
	// OffAlive is the reader's heartbeat; OffGaveUp set by a pad that
	// found it still (the tracer is gone: full rings drop), cleared by
	// the reader; OffLossy set by the tracer: full rings drop (--lossy,
	// and while the pads are taken out).
	OffAlive  = 448
	OffGaveUp = 512
	OffLossy  = 576
	// OffSleep is set while the reader sleeps on it (a futex).
	OffSleep = 640
	// OffSync, set by the tracer, makes a pad wait after each record
	// until the reader has passed it (record.go, emitSync); its value
	// is the TSC cycles the pad spins before it sleeps (SetSync).
	OffSync = 832
	// OffSpin is 1 while a pad spins for its line (emitSync): one at a
	// time, the others sleep at once.
	OffSpin = 896
	// OffSyncAt, set by the tracer in place of OffSync (SyncAtWrites),
	// makes the sync points (Spec.SyncPoint: the program's writes to
	// the terminal) wait until the reader has passed every record before
	// them; its value is their spin, as OffSync's.
	OffSyncAt = 960
	// OffTracer is the tracer's liveness word: the id of its thread, on
	// that thread's robust futex list, so the kernel clears it the moment
	// the thread dies; 0 once the tracer lets the process go. While it is
	// set, pads read memory with plain loads whose faults the tracer
	// fixes up (bytecode.SelfRead). OffTracerNode is the list's node.
	OffTracer     = 768
	OffTracerNode = 776
	// OffFaulted has a bit per site id below MaxCounted, set by the
	// tracer once a load of the site's pad faulted: its reads go through
	// system calls from then on, so a pad reading bad pointers over and
	// over is not a ptrace stop each time, nor a fault racing the
	// tracer's death.
	OffFaulted = 1024

	// Record offsets.
	RecSeq  = 0
	RecTSC  = 8
	RecFS   = 16 // the thread's fs base: its identity (the tracer maps it to a tid)
	RecSite = 24 // site id (low 32 bits), faults (bits 32–39), kind (high 8 bits)
	RecVals = 32
)

// After the records, one mark word per slot: index+1 of the last event
// dropped there, so the reader skips that hole at once.

// Busy marks a claimed record in its seq word.
const Busy = uint64(1) << 63

// Open marks a committed record its writer may still amend (an open
// call, Spec.Open): an entry whose return pad, finding it the ring's
// last record and unread, claims it again and adds the return (a
// KindCall record), one record a call instead of two. The reader takes
// it as it is (Open cleared by cmpxchg, the amend then fails) once it is
// not the last, or has waited openGrace, or must pass it (a drain to a
// stop's marks, the last one).
const Open = uint64(1) << 62

// DefaultRecords is the records of a ring: 8 MiB of records, 1 MiB of
// marks, touched only as records reach them. A burst of 100k calls on
// many threads fits, whatever the tracer is doing meanwhile.
const DefaultRecords = 1 << 17

// Size is the bytes of a ring of n records: the header, the records,
// their marks, one counter per site for traces that only count, the
// strings (strs.go), then the system call pads' values (syspad.go).
func Size(n int) int { return smallOff(n) + smallRecords(n)*sysSmallSpace }

// MaxCounted is the sites a ring keeps counters for (site ids below it).
const MaxCounted = 8192

// CountOff is the offset of site id's counter in a ring of n records: a
// pad of a counting trace (probe.Target.Tally) only adds one to it, with
// no record, so counts are exact however fast the calls come.
func CountOff(n, id int) int { return HeaderSize + n*(RecSize+8) + 8*id }

// Count is site id's counter.
func (r *Ring) Count(id int) uint64 {
	return atomic.LoadUint64(r.word(CountOff(int(r.n), id)))
}

// MarkOff is the offset of slot i's mark word in a ring of n records.
func MarkOff(n, i int) int { return HeaderSize + n*RecSize + 8*i }

// Record is one event as a pad wrote it.
type Record struct {
	Index uint64 // its reservation index: its place in the ring's order
	TSC   uint64
	FS    uint64
	Site  uint32
	Kind  uint8
	// Faults: bit i set when value i's memory read failed (the value
	// is then unreadable, as a breakpoint's faulting read).
	Faults uint8
	Vals   [MaxValues]uint64
	// Strs: bit i set when value i is a string: Str(i), or NULL.
	Strs uint8
	strs [MaxValues][]byte // in the ring's string area
	// extra: the values past Vals, in the string area (extras.go).
	extra []byte
	// Sys: a KindSys record's system call values (syspad.go).
	Sys []byte
}

// Extra is extra value k (Spec.Extra), 0 if the record has none.
func (r *Record) Extra(k int) uint64 {
	if 8*k+8 > len(r.extra) {
		return 0
	}
	return binary.LittleEndian.Uint64(r.extra[8*k:])
}

// Str is value i's string, ok false for a NULL pointer (str(0)). Its
// bytes are the ring's, valid until the drain that read the record
// returns: no pad writes a string part before the reader's tail, which a
// drain publishes as it ends, has passed its record (strs.go).
func (r *Record) Str(i int) (s []byte, ok bool) {
	if r.Vals[i] == strNull {
		return nil, false
	}
	return r.strs[i], true
}

// SplitCall makes r, a KindCall record, its entry again, and ret the
// return record its return pad (site r.Site+1, fetching n values: 0, or
// 1 equal to rax) would have written: the values, rax, the entry's tsc,
// stamped with the return's.
func (r *Record) SplitCall(ret *Record, n int) {
	// Field by field: a literal zeroed the strings' slices too, 4% of
	// the tracer's time.
	ret.Index, ret.TSC, ret.FS, ret.Site, ret.Kind = r.Index, r.Vals[MaxOpenValues+1], r.FS, r.Site+1, KindReturn
	ret.Faults, ret.Strs, ret.Sys = 0, 0, ret.Sys[:0]
	ret.Vals = [MaxValues]uint64{}
	ret.Vals[0], ret.Vals[n], ret.Vals[n+1] = r.Vals[MaxOpenValues], r.Vals[MaxOpenValues], r.TSC
	r.Kind, r.Vals[MaxOpenValues], r.Vals[MaxOpenValues+1] = KindEntry, 0, 0
}

// faultShift is where a record's site word keeps its fault bits.
const faultShift = 32

var errRing = errors.New("pad: ring")

// Ring is the tracer's view of one process's ring.
type Ring struct {
	mem  []byte
	n    uint64
	tail uint64
	rseq atomic.Uint64 // SetRseq's offset, kept while diverted
	// waiting: the record at tail was reserved but not claimed when last
	// looked at (its producer is between its two atomics, or dropped it
	// without a mark); after grace it is skipped.
	waitTail  uint64
	waitSince time.Time
	// wokeAt: the tail when the waiting pads were last woken (freed).
	wokeAt uint64
	// room: the least room of the pads whose records were read: a
	// string fetch's (StrRecords), a system call pad's, else the ring.
	room uint64
	// scratch is the records drain reads into, in turn: one made per
	// drain would cost an allocation, one alone would not let a consumer
	// keep a record while it reads the next (a call's entry until its
	// return, ptrace/pads).
	scratch [2]Record
	flip    int
	// drained runs at the end of each drain, before its tail is
	// published (SetDrained).
	drained func()
	sync    bool // SetSync
	// open: index+1 of the Open record a drain left at the tail (the
	// last reserved: its return may amend it), and since when.
	open      uint64
	openSince time.Time
	batch     bool // in DrainBatch
}

// openGrace is how long the reader leaves an Open record, the last, for
// its return pad to amend: a call that takes longer (a read that blocks)
// shows its entry then, its return on its own.
const openGrace = 2 * time.Millisecond

// SetDrained makes f run at the end of every drain, before the records
// it read are given back to the producers: a consumer that keeps a
// record past the drain's last call of its f (a call's entry held for
// its return, ptrace/pads), its strings read in place, is done with it
// by then. Once published, the tail lets a pad write over them.
func (r *Ring) SetDrained(f func()) { r.drained = f }

// NewRing wraps mem, a shared mapping of a ring of n records (a power of
// two), zeros when new.
func NewRing(mem []byte, n int) (*Ring, error) {
	if n <= 0 || n&(n-1) != 0 || len(mem) < Size(n) {
		return nil, fmt.Errorf("%w: %d records in %d bytes", errRing, n, len(mem))
	}
	return &Ring{mem: mem, n: uint64(n), room: uint64(n)}, nil
}

func (r *Ring) word(off int) *uint64 { return (*uint64)(unsafe.Pointer(&r.mem[off])) }

func (r *Ring) rec(i uint64) int { return HeaderSize + int(i&(r.n-1))*RecSize }

// Drops is the events the pads dropped (a full ring).
func (r *Ring) Drops() uint64 { return atomic.LoadUint64(r.word(OffDrops)) }

// RetMissed is the calls whose return the pads did not hijack
// (OffRetMissed).
func (r *Ring) RetMissed() uint64 { return atomic.LoadUint64(r.word(OffRetMissed)) }

// Divert adds d to the ring's divert word (OffDivert). While it is not
// 0 the pads find no rseq offset (OffRseq): a vfork child runs on its
// parent's TLS with no rseq registered, its CPU number stale.
func (r *Ring) Divert(d int64) {
	if atomic.AddUint64(r.word(OffDivert), uint64(d)) == 0 {
		atomic.StoreUint64(r.word(OffRseq), r.rseq.Load())
	} else {
		atomic.StoreUint64(r.word(OffRseq), 0)
	}
}

// Tail is the index of the next record to read: every record below it is
// read or skipped.
func (r *Ring) Tail() uint64 { return r.tail }

// Reserved is the records the pads have reserved so far.
func (r *Ring) Reserved() uint64 { return atomic.LoadUint64(r.word(OffHead)) }

// grace is how long a reserved record may stay unclaimed before the reader
// takes it for a drop: its producer stopped between its two atomics (a
// signal's ptrace stop there, a group-stop), or gone. A dropped record is
// marked and passed at once: only these wait, and they are rare.
const grace = 500 * time.Millisecond

// Drain passes every committed record, in reservation order, to f, and
// frees its slot; it stops at the first record still being written.
// It returns the records read. A record f gets stays as it is until f's
// next call returns, or the drain does. An Open record is taken as it is.
func (r *Ring) Drain(f func(*Record)) int { return r.drain(f, false, ^uint64(0), ^uint64(0)) }

// DrainBatch is DrainUpTo leaving an Open record that is the ring's
// last, for openGrace, to its return pad (AtOpen says so): the reader's
// own pace, where nothing waits for the records.
func (r *Ring) DrainBatch(i uint64, f func(*Record)) int {
	r.batch = true
	n := r.drain(f, false, ^uint64(0), i)
	r.batch = false
	return n
}

// AtOpen says whether the last drain stopped at an Open record left to
// its return pad (DrainBatch).
func (r *Ring) AtOpen() bool { return r.open == r.tail+1 }

// DrainBeforeUpTo is Drain stopping at the first record stamped at or
// after tsc (what happened before an event the tracer is about to emit),
// and at record index i.
func (r *Ring) DrainBeforeUpTo(tsc, i uint64, f func(*Record)) int {
	return r.drain(f, false, tsc, i)
}

// DrainUpTo is Drain stopping at record index i: what was reserved
// before a stop the tracer is about to emit.
func (r *Ring) DrainUpTo(i uint64, f func(*Record)) int {
	return r.drain(f, false, ^uint64(0), i)
}

// DrainLast is Drain once no producer is left (the process is stopped
// for good or gone): a record still reserved or claimed never will be
// written, and is passed.
func (r *Ring) DrainLast(f func(*Record)) int { return r.drain(f, true, ^uint64(0), ^uint64(0)) }

// DrainLastUpTo is DrainLast stopping at record index i.
func (r *Ring) DrainLastUpTo(i uint64, f func(*Record)) int { return r.drain(f, true, ^uint64(0), i) }

// drain reads records below index upTo at most.
func (r *Ring) drain(f func(*Record), last bool, before, upTo uint64) int {
	n := 0
	// Up to what was reserved when it started: producers faster than the
	// reader must not keep it here (the tracer's loop waits for it).
scan:
	for end := min(r.Reserved(), upTo); r.tail < end; {
		off := r.rec(r.tail)
		seq := r.word(off + RecSeq)
		s := r.tail & (r.n - 1)
		v := atomic.LoadUint64(seq) + s
		if v == (r.tail+1)|Open {
			if r.leaveOpen() {
				break scan
			}
			// Taken as it is: its return pad's amend fails from now on.
			if !atomic.CompareAndSwapUint64(seq, (r.tail+1-s)|Open, r.tail+1-s) {
				continue // amended meanwhile, or being amended
			}
			v = r.tail + 1
		}
		switch {
		case v == r.tail+1:
			if *r.word(off + RecTSC) >= before {
				break scan
			}
			rec := &r.scratch[r.flip]
			r.flip ^= 1
			r.read(off, r.tail, rec)
			rec.Index = r.tail
			atomic.StoreUint64(seq, r.tail+r.n-s)
			r.tail++
			n++
			f(rec)
			continue
		case v == r.tail && r.Reserved() > r.tail:
			// Reserved, not claimed: dropped (marked), or about to be
			// claimed. A successful CAS makes the late claim fail.
			mark := atomic.LoadUint64(r.word(MarkOff(int(r.n), int(r.tail&(r.n-1)))))
			// A mark from a later lap also means this one is lost:
			// its producer, even if only preempted before its claim,
			// will fail the claim once the slot is passed.
			if mark <= r.tail && !last && !r.overdue() {
				break scan
			}
			if atomic.CompareAndSwapUint64(seq, r.tail-s, r.tail+r.n-s) {
				r.tail++
			}
			continue
		case last && v == r.tail|Busy && r.Reserved() > r.tail:
			r.tail++
			continue
		}
		break
	}
	if r.drained != nil {
		r.drained()
	}
	// Producers see room again from here. Records left (reserved past
	// the bound) or not: a drain bounded by a snapshot of the head that
	// read everything leaves none, and its waiters must be woken now (a
	// system call pad waits with 1,024 or 8,192 unread, far less than a
	// quarter of the ring: it waited out its futex's 100 ms timeout).
	atomic.StoreUint64(r.word(OffTail), r.tail)
	r.freed(r.tail >= upTo && r.Reserved() > r.tail)
	return n
}

// leaveOpen says whether a drain leaves the Open record at tail to its
// return pad: a batch's (DrainBatch), the record the last reserved, for
// openGrace.
func (r *Ring) leaveOpen() bool {
	if !r.batch || r.Reserved() != r.tail+1 {
		return false
	}
	now := time.Now()
	if r.open != r.tail+1 {
		r.open, r.openSince = r.tail+1, now
		return true
	}
	return now.Sub(r.openSince) < openGrace
}

// overdue tracks how long the reader has waited at tail.
func (r *Ring) overdue() bool {
	now := time.Now()
	if r.waitSince.IsZero() || r.waitTail != r.tail {
		r.waitTail, r.waitSince = r.tail, now
		return false
	}
	return now.Sub(r.waitSince) > grace
}

func (r *Ring) read(off int, index uint64, rec *Record) {
	rec.TSC = *r.word(off + RecTSC)
	rec.FS = *r.word(off + RecFS)
	s := *r.word(off + RecSite)
	rec.Site, rec.Kind, rec.Faults = uint32(s), uint8(s>>56), uint8(s>>faultShift)
	rec.Strs = uint8(s>>strShift) & (1<<MaxValues - 1)
	if rec.Sys = rec.Sys[:0]; rec.Kind == KindSys || rec.Kind == KindSysSmall {
		r.readSys(index, rec)
		r.room = min(r.room, uint64(min(sysRecords(int(r.n)), smallRecords(int(r.n)))))
	}
	if rec.Strs != 0 || s&extraBit != 0 {
		r.room = min(r.room, uint64(strRecords(int(r.n))))
	}
	rec.extra = nil
	if s&extraBit != 0 {
		at := StrAt(int(r.n), index, int(s>>extraSlotShift)&(MaxValues-1))
		rec.extra = r.mem[at : at+8*MaxExtra : at+8*MaxExtra]
	}
	for i := range rec.Vals {
		rec.Vals[i] = *r.word(off + RecVals + 8*i)
		if rec.Strs&(1<<i) != 0 && rec.Faults&(1<<i) == 0 && rec.Vals[i] <= probe.MaxStrLen {
			at := StrAt(int(r.n), index, i)
			rec.strs[i] = r.mem[at : at+int(rec.Vals[i]) : at+int(rec.Vals[i])]
		}
	}
}
