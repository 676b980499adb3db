package pad

import (
	"math"
	"math/bits"
	"sync/atomic"
	"unsafe"

	"github.com/utap/utap/internal/agg"
	"github.com/utap/utap/internal/x86"
)

// Aggregations computed in the process (probe.Target.Aggregate): a pad of
// an aggregated spec, instead of a record per hit, adds the hit's value
// to its key's slot in a table in the memory it shares with the tracer,
// after the ring. One table per spec: an open-addressing hash table whose
// slot is
//
//	state (0 free, 1 being claimed, 2 keyed), site id, key words...,
//	count, sum, min, max, buckets...
//
// A pad claims a free slot with cmpxchg(state, 0 → 1), writes the key,
// then state = 2 (a plain store, after the key's: x86-TSO); it adds with
// locked instructions only (xadd, inc, cmpxchg loops for min and max).
// Nothing waits: a slot being claimed by another thread, no free slot
// within aggProbes of the key's, a key whose read faulted, or a vfork
// child in the memory (OffDivert), and the hit writes its ordinary record
// instead, which the CLI aggregates as a breakpoint's event: nothing is
// lost. The tracer reads the tables while the process runs (differences
// since its last read) and once the pads are out (exact totals).

// AggHeader is a table's header: the values left out because their read
// faulted (AggUnreadable), the hits that found no slot and wrote a record
// (AggFallbacks).
const (
	AggHeader     = 64
	AggUnreadable = 0
	AggFallbacks  = 8
)

// aggProbes bounds the slots a pad looks at for its key.
const aggProbes = 16

// Slot offsets.
const (
	aggState = 0
	aggSite  = 8
	aggKeys  = 16
	aggKeyed = 2
)

// AggTable is one spec's table: where it is in the aggregation area and
// its shape, the same in every process.
type AggTable struct {
	Off   int // from the start of the area (after the ring, Size)
	Slots int // a power of two, at least 2
	Kind  agg.Kind
	Keys  int // key words after the site id's
}

// NewAggTable sizes a table of kind k with keys key words at off: up to
// slots slots, fewer for an lhist whose buckets would make it over
// maxBytes.
func NewAggTable(off int, k agg.Kind, keys, slots, maxBytes int) AggTable {
	t := AggTable{Off: off, Slots: max(slots, 2), Kind: k, Keys: keys}
	for t.Slots > 2 && t.Size() > maxBytes {
		t.Slots /= 2
	}
	return t
}

// buckets is a slot's bucket count (agg.Kind's).
func (t AggTable) buckets() int {
	switch t.Kind.Func {
	case agg.Hist:
		return agg.HistBuckets
	case agg.LHist:
		return int((t.Kind.Max-t.Kind.Min)/t.Kind.Step) + 2
	}
	return 0
}

func (t AggTable) count() int  { return aggKeys + 8*t.Keys }
func (t AggTable) sum() int    { return t.count() + 8 }
func (t AggTable) min() int    { return t.count() + 16 }
func (t AggTable) max() int    { return t.count() + 24 }
func (t AggTable) bucket() int { return t.count() + 32 }

// Stride is a slot's bytes.
func (t AggTable) Stride() int { return t.bucket() + 8*t.buckets() }

// Size is the table's bytes.
func (t AggTable) Size() int { return AggHeader + t.Slots*t.Stride() }

// AggSite is a pad's aggregation (Spec.Agg).
type AggSite struct {
	Table uint64 // the table's address in the process
	T     AggTable
	Value int   // the fetch aggregated; -1 for count()
	Keys  []int // the fetches that are key words, in the table's order
}

// AggSlot is one keyed slot as the tracer reads it.
type AggSlot struct {
	Index int
	Site  uint32
	Keys  []uint64
	State agg.State
}

// ReadAgg calls f for every keyed slot of t in mem (the area), its state
// as it is now: exact once no pad runs.
func (t AggTable) ReadAgg(mem []byte, f func(*AggSlot)) {
	word := func(off int) uint64 {
		return atomic.LoadUint64((*uint64)(unsafe.Pointer(&mem[t.Off+off])))
	}
	s := AggSlot{Keys: make([]uint64, t.Keys)}
	for i := range t.Slots {
		at := AggHeader + i*t.Stride()
		if word(at+aggState) != aggKeyed {
			continue
		}
		s.Index, s.Site = i, uint32(word(at+aggSite))
		for j := range s.Keys {
			s.Keys[j] = word(at + aggKeys + 8*j)
		}
		// The count first (the pads add it last): the rest holds every
		// hit it counts.
		s.State = agg.State{Count: word(at + t.count())}
		if s.State.Count == 0 {
			continue
		}
		s.State.Sum = int64(word(at + t.sum()))
		if t.Kind.Func == agg.Min {
			s.State.Min = int64(word(at + t.min()))
		}
		if t.Kind.Func == agg.Max {
			s.State.Max = int64(word(at + t.max()))
		}
		if n := t.buckets(); n > 0 {
			s.State.Buckets = make([]uint64, n)
			for b := range n {
				s.State.Buckets[b] = word(at + t.bucket() + 8*b)
			}
		}
		f(&s)
	}
}

// Header is the header word at off (AggUnreadable, AggFallbacks).
func (t AggTable) Header(mem []byte, off int) uint64 {
	return atomic.LoadUint64((*uint64)(unsafe.Pointer(&mem[t.Off+off])))
}

func frameVal(i int) x86.Mem { return x86.Mem{Base: x86.RBX, Disp: 8 * int32(slotVals+i)} }

// emitAgg adds the hit to its slot and jumps to done; it falls through
// where the hit must write its record instead (emitRecord follows).
func emitAgg(a *x86.Asm, s Spec) {
	g, t := s.Agg, s.Agg.T
	done, rec, unreadable := a.NewLabel(), a.NewLabel(), a.NewLabel()
	probe, state, compare, next, update := a.NewLabel(), a.NewLabel(), a.NewLabel(), a.NewLabel(), a.NewLabel()
	a.MovRI(x86.RSI, s.Ring)
	a.Load(x86.RAX, ringMem(OffDivert))
	a.RR(x86.TEST, x86.RAX, x86.RAX)
	a.Jcc(x86.NE, rec)
	a.MovRI(x86.RSI, g.Table)
	if reads(s) {
		a.Load(x86.RAX, x86.Mem{Base: x86.RBX, Disp: 8 * slotFaults})
		var keyMask uint64
		for _, k := range g.Keys {
			keyMask |= 1 << k
		}
		if keyMask != 0 {
			a.MovRI(x86.RDX, keyMask)
			a.RR(x86.TEST, x86.RAX, x86.RDX)
			a.Jcc(x86.NE, rec) // a key unread: the record says "?"
		}
		if g.Value >= 0 {
			a.MovRI(x86.RDX, 1<<g.Value)
			a.RR(x86.TEST, x86.RAX, x86.RDX)
			a.Jcc(x86.NE, unreadable)
		}
	}
	// The slot: a multiplicative hash of the site id and the key words,
	// its top bits.
	const golden = 0x9e3779b97f4a7c15
	a.MovRI(x86.RAX, uint64(s.ID)+1)
	a.MovRI(x86.RDX, golden)
	a.RR(x86.IMUL, x86.RAX, x86.RDX)
	for _, k := range g.Keys {
		a.Load(x86.RCX, frameVal(k))
		a.RR(x86.XOR, x86.RAX, x86.RCX)
		a.RR(x86.IMUL, x86.RAX, x86.RDX)
	}
	a.RI(x86.SHR, x86.RAX, int32(64-bits.TrailingZeros(uint(t.Slots))))
	a.MovRR(x86.R11, x86.RAX)
	a.MovRI(x86.R9, aggProbes)

	slot := func(off int) x86.Mem { return x86.Mem{Base: x86.RDI, Disp: int32(AggHeader + off)} }
	a.Bind(probe)
	a.MovRR(x86.RDI, x86.R11)
	a.RI(x86.IMUL, x86.RDI, int32(t.Stride()))
	a.RR(x86.ADD, x86.RDI, x86.RSI)
	a.Load(x86.RAX, slot(aggState))
	a.Bind(state)
	a.RI(x86.CMP, x86.RAX, aggKeyed)
	a.Jcc(x86.E, compare)
	a.RR(x86.TEST, x86.RAX, x86.RAX)
	a.Jcc(x86.NE, rec) // another thread is writing its key: whose is unknown
	a.MovRI(x86.R8, 1)
	a.LockCmpxchg(slot(aggState), x86.R8)
	a.Jcc(x86.NE, state) // taken meanwhile: rax holds its state
	a.MovRI(x86.RAX, uint64(s.ID))
	a.Store(slot(aggSite), x86.RAX)
	for j, k := range g.Keys {
		a.Load(x86.RAX, frameVal(k))
		a.Store(slot(aggKeys+8*j), x86.RAX)
	}
	a.MovRI(x86.RAX, math.MaxInt64)
	a.Store(slot(t.min()), x86.RAX)
	a.MovRI(x86.RAX, 1<<63)
	a.Store(slot(t.max()), x86.RAX)
	a.MovRI(x86.RAX, aggKeyed)
	a.Store(slot(aggState), x86.RAX)
	a.Jmp(update)

	a.Bind(compare)
	a.Load(x86.RAX, slot(aggSite))
	a.MovRI(x86.RCX, uint64(s.ID))
	a.RR(x86.CMP, x86.RAX, x86.RCX)
	a.Jcc(x86.NE, next)
	for j, k := range g.Keys {
		a.Load(x86.RAX, slot(aggKeys+8*j))
		a.Load(x86.RCX, frameVal(k))
		a.RR(x86.CMP, x86.RAX, x86.RCX)
		a.Jcc(x86.NE, next)
	}
	a.Jmp(update)

	a.Bind(next)
	a.RI(x86.ADD, x86.R11, 1)
	a.RI(x86.AND, x86.R11, int32(t.Slots-1))
	a.RI(x86.SUB, x86.R9, 1)
	a.Jcc(x86.NE, probe)
	a.LockInc(x86.Mem{Base: x86.RSI, Disp: AggFallbacks})
	a.Jmp(rec)

	a.Bind(update)
	if g.Value >= 0 {
		emitAggValue(a, t, slot, g.Value)
	}
	// The count last: a reader that reads it first finds every part of
	// the hits it counts (and maybe some of hits it will count later).
	a.LockInc(slot(t.count()))
	a.Jmp(done)

	a.Bind(unreadable)
	a.LockInc(x86.Mem{Base: x86.RSI, Disp: AggUnreadable})
	a.Jmp(done)
	a.Bind(rec)
	emitRecord(a, s, done)
	a.Bind(done)
}

// emitAggValue adds fetch v's value to the slot at rdi: its sum, min,
// max or bucket, as t's kind needs.
func emitAggValue(a *x86.Asm, t AggTable, slot func(int) x86.Mem, v int) {
	a.Load(x86.RDX, frameVal(v))
	switch t.Kind.Func {
	case agg.Sum, agg.Avg, agg.Stats:
		// The others never show their sum: one locked instruction less.
		a.MovRR(x86.RCX, x86.RDX)
		a.LockXadd(slot(t.sum()), x86.RCX)
	}
	extreme := func(off int, keep x86.CC) {
		again, kept := a.NewLabel(), a.NewLabel()
		a.Load(x86.RAX, slot(off))
		a.Bind(again)
		a.RR(x86.CMP, x86.RDX, x86.RAX)
		a.Jcc(keep, kept)
		a.LockCmpxchg(slot(off), x86.RDX)
		a.Jcc(x86.NE, again) // rax: the newer extreme
		a.Bind(kept)
	}
	switch t.Kind.Func {
	case agg.Min:
		extreme(t.min(), x86.GE)
	case agg.Max:
		extreme(t.max(), x86.LE)
	case agg.Hist:
		// agg.Kind.Bucket: 0 below zero, 1 for 0, else 1 + bits.Len64(v)
		// = 2 + bsr(v).
		neg, zero, have := a.NewLabel(), a.NewLabel(), a.NewLabel()
		a.RR(x86.TEST, x86.RDX, x86.RDX)
		a.Jcc(x86.L, neg)
		a.Jcc(x86.E, zero)
		a.Raw(0x48, 0x0f, 0xbd, 0xca) // bsr %rdx,%rcx
		a.RI(x86.ADD, x86.RCX, 2)
		a.Jmp(have)
		a.Bind(neg)
		a.MovRI(x86.RCX, 0)
		a.Jmp(have)
		a.Bind(zero)
		a.MovRI(x86.RCX, 1)
		a.Bind(have)
		bucketInc(a, t)
	case agg.LHist:
		emitLinearBucket(a, t.Kind, t.buckets()-2)
		bucketInc(a, t)
	}
}

// emitLinearBucket puts in rcx lhist's bucket of rdx (agg.Kind.Bucket):
// 0 below min, n+1 at or above max, else 1 + (v-min)/step.
func emitLinearBucket(a *x86.Asm, k agg.Kind, n int) {
	low, high, have := a.NewLabel(), a.NewLabel(), a.NewLabel()
	a.MovRR(x86.RAX, x86.RDX)
	a.MovRI(x86.RCX, uint64(k.Min))
	a.RR(x86.CMP, x86.RAX, x86.RCX)
	a.Jcc(x86.L, low)
	a.MovRI(x86.RCX, uint64(k.Max))
	a.RR(x86.CMP, x86.RAX, x86.RCX)
	a.Jcc(x86.GE, high)
	a.MovRI(x86.RCX, uint64(k.Min))
	a.RR(x86.SUB, x86.RAX, x86.RCX)
	if k.Step&(k.Step-1) == 0 {
		a.RI(x86.SHR, x86.RAX, int32(bits.TrailingZeros64(uint64(k.Step))))
	} else {
		a.MovRI(x86.RDX, 0)
		a.MovRI(x86.RCX, uint64(k.Step))
		a.Div(x86.RCX) // (v-min) >= 0: unsigned
	}
	a.Lea(x86.RCX, x86.Mem{Base: x86.RAX, Disp: 1})
	a.Jmp(have)
	a.Bind(low)
	a.MovRI(x86.RCX, 0)
	a.Jmp(have)
	a.Bind(high)
	a.MovRI(x86.RCX, uint64(n+1))
	a.Bind(have)
}

// bucketInc adds one to bucket rcx of the slot at rdi.
func bucketInc(a *x86.Asm, t AggTable) {
	a.RI(x86.SHL, x86.RCX, 3)
	a.RR(x86.ADD, x86.RCX, x86.RDI)
	a.LockInc(x86.Mem{Base: x86.RCX, Disp: int32(AggHeader + t.bucket())})
}
