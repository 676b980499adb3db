package pad

import (
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"
)

// produce is the lossy pads' protocol in Go (record.go emits it as
// machine code): reserve while there is room, claim, write, commit; a
// full ring drops, a failed claim drops and marks.
func produce(mem []byte, n uint64, site uint32, v uint64) bool {
	w := func(off int) *uint64 { return (*uint64)(unsafe.Pointer(&mem[off])) }
	var i uint64
	for {
		tail := atomic.LoadUint64(w(OffTail))
		i = atomic.LoadUint64(w(OffHead))
		if i-tail >= n {
			atomic.AddUint64(w(OffDrops), 1)
			return false
		}
		if atomic.CompareAndSwapUint64(w(OffHead), i, i+1) {
			break
		}
	}
	s := i & (n - 1)
	off := HeaderSize + int(s)*RecSize
	if !atomic.CompareAndSwapUint64(w(off+RecSeq), i-s, (i-s)|Busy) {
		atomic.AddUint64(w(OffDrops), 1)
		atomic.StoreUint64(w(MarkOff(int(n), int(i&(n-1)))), i+1)
		return false
	}
	*w(off + RecTSC) = i
	*w(off + RecSite) = uint64(site)
	*w(off + RecVals) = v
	atomic.StoreUint64(w(off+RecSeq), i+1-s)
	return true
}

func newTestRing(t *testing.T, n int) (*Ring, []byte) {
	mem := make([]byte, Size(n))
	r, err := NewRing(mem, n)
	if err != nil {
		t.Fatal(err)
	}
	return r, mem
}

// Producers racing a reader: every event is either read, in order per
// producer, or counted as dropped, never both, never lost.
func TestRingConcurrent(t *testing.T) {
	const n, producers, each = 256, 8, 20000
	r, mem := newTestRing(t, n)
	var wg sync.WaitGroup
	var written atomic.Uint64
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range each {
				if produce(mem, n, uint32(p), uint64(k)) {
					written.Add(1)
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	last := make([]int64, producers)
	for i := range last {
		last[i] = -1
	}
	read := 0
	check := func(rec *Record) {
		if int64(rec.Vals[0]) <= last[rec.Site] {
			t.Fatalf("producer %d: value %d after %d", rec.Site, rec.Vals[0], last[rec.Site])
		}
		last[rec.Site] = int64(rec.Vals[0])
		read++
	}
	for {
		r.Drain(check)
		select {
		case <-done:
			r.Drain(check)
			if uint64(read) != written.Load() || uint64(read)+r.Drops() != producers*each {
				t.Fatalf("read %d, written %d, dropped %d of %d", read, written.Load(), r.Drops(), producers*each)
			}
			t.Logf("read %d, dropped %d", read, r.Drops())
			return
		default:
		}
	}
}

// With no reader the ring fills, then every event drops, counted.
func TestRingFullDrops(t *testing.T) {
	const n = 16
	r, mem := newTestRing(t, n)
	for k := range 100 {
		produce(mem, n, 1, uint64(k))
	}
	if r.Drops() != 100-n {
		t.Fatalf("dropped %d, want %d", r.Drops(), 100-n)
	}
	got := 0
	r.Drain(func(*Record) { got++ })
	// The first n were kept; the holes after them are marked and skipped.
	if got != n {
		t.Fatalf("read %d, want %d", got, n)
	}
	if !produce(mem, n, 1, 7) {
		t.Fatal("a drained ring still drops")
	}
}

// SetDrained's f runs once per drain, after its last record and before
// the tail that gives their room back is published: a full ring has no
// room for a producer until f has returned.
func TestRingDrainedBeforeTail(t *testing.T) {
	const n = 16
	r, mem := newTestRing(t, n)
	for k := range n {
		if !produce(mem, n, 1, uint64(k)) {
			t.Fatalf("record %d dropped", k)
		}
	}
	var read, calls int
	r.SetDrained(func() {
		calls++
		if tail := atomic.LoadUint64((*uint64)(unsafe.Pointer(&mem[OffTail]))); tail != 0 {
			t.Errorf("tail published (%d) before the drain's end", tail)
		}
		if produce(mem, n, 1, 99) {
			t.Error("a producer found room before the drain's end")
		}
	})
	r.DrainUpTo(3, func(*Record) { read++ })
	if read != 3 || calls != 1 {
		t.Fatalf("read %d records, f called %d times; want 3, 1", read, calls)
	}
	r.SetDrained(nil)
	if !produce(mem, n, 1, 100) {
		t.Fatal("no room after the drain")
	}
}

// An Open entry (Spec.Open) left to its return pad while it is the last
// record, amended into one KindCall record; taken as it is once a record
// follows it, by a drain that must pass it, or after openGrace; an amend
// after that fails (the return pad then writes its own record).
func TestRingOpenCall(t *testing.T) {
	const n = 16
	r, mem := newTestRing(t, n)
	w := func(off int) *uint64 { return (*uint64)(unsafe.Pointer(&mem[off])) }
	// open writes an Open entry of site 6 with values a, b: record.go's
	// commit with Spec.Open.
	open := func(a, b uint64) uint64 {
		i := atomic.AddUint64(w(OffHead), 1) - 1
		s := i & (n - 1)
		off := HeaderSize + int(s)*RecSize
		if !atomic.CompareAndSwapUint64(w(off+RecSeq), i-s, (i-s)|Busy) {
			t.Fatalf("claim of %d failed", i)
		}
		*w(off + RecTSC), *w(off + RecSite), *w(off + RecVals), *w(off + RecVals + 8) = 100+i, 6, a, b
		atomic.StoreUint64(w(off+RecSeq), (i+1-s)|Open)
		return i
	}
	// amend is emitAmend's claim, write and commit of record i.
	amend := func(i, ret uint64) bool {
		s := i & (n - 1)
		off := HeaderSize + int(s)*RecSize
		if !atomic.CompareAndSwapUint64(w(off+RecSeq), (i+1-s)|Open, (i-s)|Busy) {
			return false
		}
		*w(off + RecVals + 16), *w(off + RecVals + 24) = ret, 200+i
		*w(off + RecSite) = 6 | uint64(KindCall)<<56
		atomic.StoreUint64(w(off+RecSeq), i+1-s)
		return true
	}
	var got []Record
	keep := func(rec *Record) { got = append(got, *rec) }

	i := open(1, 2)
	if r.DrainBatch(^uint64(0), keep) != 0 || !r.AtOpen() {
		t.Fatalf("the last record, Open: read %d, AtOpen %v", len(got), r.AtOpen())
	}
	if !amend(i, 3) || r.DrainBatch(^uint64(0), keep) != 1 || got[0].Kind != KindCall {
		t.Fatalf("amended: %+v", got)
	}
	var ret Record
	got[0].SplitCall(&ret, 1)
	if e := got[0]; e.Kind != KindEntry || e.Site != 6 || e.Vals != [MaxValues]uint64{1, 2, 0, 0} || e.TSC != 100 {
		t.Errorf("entry %+v", e)
	}
	if ret.Kind != KindReturn || ret.Site != 7 || ret.Vals != [MaxValues]uint64{3, 3, 100, 0} || ret.TSC != 200 {
		t.Errorf("return %+v", ret)
	}

	// A record after it: taken as it is, and the amend fails.
	got = got[:0]
	i = open(4, 5)
	produce(mem, n, 9, 10)
	if r.DrainBatch(^uint64(0), keep) != 2 || got[0].Kind != KindEntry || got[0].Vals[0] != 4 || got[1].Site != 9 || amend(i, 6) {
		t.Fatalf("Open before another: %+v", got)
	}

	// A drain that must pass it (a stop's marks, the last one), and the
	// batch after openGrace, take it as it is.
	for _, drain := range []func() int{
		func() int { return r.DrainUpTo(r.Reserved(), keep) },
		func() int { return r.DrainLast(keep) },
		func() int {
			r.DrainBatch(^uint64(0), keep)
			r.openSince = r.openSince.Add(-openGrace)
			return r.DrainBatch(^uint64(0), keep)
		},
	} {
		got = got[:0]
		i = open(7, 8)
		if drain() != 1 || got[0].Kind != KindEntry || amend(i, 9) {
			t.Fatalf("passed: %+v", got)
		}
	}
}
