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
