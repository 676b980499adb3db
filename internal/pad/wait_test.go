//go:build linux && amd64

package pad

import (
	"math/rand"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// noGC turns the collector off for the test: a pad called here that
// waits for the test's goroutine does so in a system call the runtime
// does not know of, on a thread it cannot stop, and a collection's
// stop-the-world would wait for it (the pad gives the reader up after a
// second, and the test fails).
func noGC(t *testing.T) {
	old := debug.SetGCPercent(-1)
	t.Cleanup(func() { debug.SetGCPercent(old) })
}

// fill calls the pad until its ring of n records is full.
func fill(t *testing.T, call func(a, b uint64), r *Ring, n int) {
	t.Helper()
	for i := range n {
		call(9, uint64(i))
	}
	if r.Reserved() != uint64(n) || r.Drops() != 0 || r.Waited() != 0 {
		t.Fatalf("reserved %d, dropped %d, waited %d", r.Reserved(), r.Drops(), r.Waited())
	}
}

// A pad that finds its ring full waits until the reader frees a record,
// then writes its own: nothing is dropped.
func TestPadWaitsForRoom(t *testing.T) {
	noGC(t)
	const n = 16
	f, r, _ := padUnderTest(t, n, false)
	rnd := rand.New(rand.NewSource(4))
	call := func(a, b uint64) { call(t, f, rnd, a, b) }
	fill(t, call, r, n)
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer close(done)
		call(9, 100) // waits: the ring is full
	}()
	// Drain once the pad waits (it counts its wait before it sleeps):
	// no timing, only its own word.
	for r.Waited() == 0 {
		runtime.Gosched()
	}
	got := r.Drain(func(*Record) {})
	<-done
	var last Record
	got += r.Drain(func(rec *Record) { last = *rec })
	if got != n+1 || r.Drops() != 0 || last.Vals[1] != 101 {
		t.Fatalf("read %d, dropped %d, last %+v; want %d, 0, the waiting call's", got, r.Drops(), last, n+1)
	}
}

// With the ring lossy (--lossy), a full ring drops and counts at once.
func TestPadLossyDrops(t *testing.T) {
	const n = 16
	f, r, _ := padUnderTest(t, n, false)
	rnd := rand.New(rand.NewSource(5))
	call := func(a, b uint64) { call(t, f, rnd, a, b) }
	r.SetLossy()
	fill(t, call, r, n)
	for i := range 10 {
		call(9, uint64(i))
	}
	if r.Drops() != 10 || r.Waited() != 0 || r.Drain(func(*Record) {}) != n {
		t.Fatalf("dropped %d, waited %d", r.Drops(), r.Waited())
	}
}

// No reader (the tracer killed): a pad waits until the heartbeat has been
// still for its limit, then gives the tracer up, and every pad after it
// drops at once; a drain takes the verdict back.
func TestPadGivesUpDeadReader(t *testing.T) {
	const n = 16
	f, r, _ := padUnderTest(t, n, false)
	rnd := rand.New(rand.NewSource(6))
	call := func(a, b uint64) { call(t, f, rnd, a, b) }
	fill(t, call, r, n)
	call(9, 0) // waits, then gives up
	for i := range 1000 {
		call(9, uint64(i))
	}
	if r.Drops() != 1001 || r.Waited() != 1 {
		t.Fatalf("dropped %d, waited %d; want 1001, 1", r.Drops(), r.Waited())
	}
	r.Drain(func(*Record) {})
	for i := range n {
		call(9, uint64(i))
	}
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer close(done)
		call(9, 1)
	}()
	for r.Waited() == 1 {
		runtime.Gosched()
	}
	r.Drain(func(*Record) {})
	<-done
	if r.Drops() != 1001 {
		t.Fatalf("dropped %d after the drain, want 1001", r.Drops())
	}
}

// Signals interrupt a pad's wait for room (EINTR, the handler run in the
// meantime): it waits on, and writes its record once there is room.
func TestPadWaitInterrupted(t *testing.T) {
	const n = 16
	f, r, _ := padUnderTest(t, n, false)
	rnd := rand.New(rand.NewSource(7))
	call := func(a, b uint64) { call(t, f, rnd, a, b) }
	fill(t, call, r, n)
	tid := make(chan int, 1)
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer close(done)
		tid <- unix.Gettid()
		call(9, 100)
	}()
	th := <-tid
	for r.Waited() == 0 {
		runtime.Gosched()
	}
	for range 2000 { // SIGURG: the Go runtime's, harmless
		unix.Tgkill(unix.Getpid(), th, unix.SIGURG)
	}
	got := r.Drain(func(*Record) {})
	<-done
	got += r.Drain(func(*Record) {})
	if got != n+1 || r.Drops() != 0 {
		t.Fatalf("read %d, dropped %d; want %d, 0", got, r.Drops(), n+1)
	}
}

// A drain bounded by the head as it was (DrainUpTo) that reads every
// record wakes the waiters: none is left to read, and a system call pad
// waits with SysRecords unread, far less than the quarter of a large
// ring after which a drain with records left wakes them (it waited out
// its futex's 100 ms timeout: dd under -S ran 10x slower).
func TestDrainUpToWakes(t *testing.T) {
	const n = 1 << 16
	mem := make([]byte, Size(n))
	r, err := NewRing(mem, n)
	if err != nil {
		t.Fatal(err)
	}
	*r.word(OffWaiters) = 1
	room := func() uint64 { return *r.word(OffRoom) }
	if r.DrainUpTo(0, func(*Record) {}); room() != 1 {
		t.Fatalf("waiters not woken by a drain that left nothing: room word %d", room())
	}
	*r.word(OffHead) = 5 // reserved, never written: the drain stops before them
	if r.DrainUpTo(0, func(*Record) {}); room() != 1 {
		t.Fatalf("waiters woken by a drain that left records: room word %d", room())
	}
}

// waiters is how many pads wait on the ring (for room, or for the reader
// to pass their record).
func waiters(r *Ring) uint64 { return atomic.LoadUint64(r.word(OffWaiters)) }

// With SetSync, a pad waits after its record until the reader has passed
// it, spinning, then sleeping: the call returns only after a drain. Not
// while the tracer is gone (its liveness word 0, or its death bit set),
// nor once the ring is lossy (the pads about to be taken out).
func TestPadSyncWaitsForReader(t *testing.T) {
	noGC(t)
	const n = 16
	f, r, mem := padUnderTest(t, n, false, func(s *Spec) { s.Sync = true })
	rnd := rand.New(rand.NewSource(8))
	tracer := (*uint32)(unsafe.Pointer(&mem[OffTracer]))
	atomic.StoreUint32(tracer, 1234) // the tracer's thread, alive
	async := func(b uint64) chan struct{} {
		done := make(chan struct{})
		go func() {
			runtime.LockOSThread()
			defer close(done)
			call(t, f, rand.New(rand.NewSource(int64(b))), 9, b)
		}()
		return done
	}
	// Spinning, or asleep once its spin is over: not back before the
	// drain that reads its record has ended.
	r.SetSync(SyncSpin)
	done := async(0)
	returned := func(*Record) {
		select {
		case <-done:
			t.Error("the call returned before its record was read")
		default:
		}
	}
	for r.Drain(returned) == 0 {
		runtime.Gosched()
	}
	<-done

	// Another pad spinning (OffSpin taken): this one sleeps at once,
	// however long it may spin.
	spinWord := (*uint64)(unsafe.Pointer(&mem[OffSpin]))
	atomic.StoreUint64(spinWord, 1)
	r.SetSync(1 << 40)
	done = async(4)
	for waiters(r) == 0 {
		runtime.Gosched()
	}
	if got := r.Drain(func(*Record) {}); got != 1 {
		t.Fatalf("read %d records, want 1", got)
	}
	<-done
	atomic.StoreUint64(spinWord, 0)

	// Asleep at once: waiting on its own word.
	r.SetSync(1)
	heldUntilDrained(t, r, async(1), 1)
	if waiters(r) != 0 || r.Waited() != 0 {
		t.Fatalf("waiters %d, waited for room %d; want 0, 0", waiters(r), r.Waited())
	}

	// The tracer died: its robust-list bit; then gone (0): no wait.
	for _, v := range []uint32{1234 | futexOwnerDied, 0} {
		atomic.StoreUint32(tracer, v)
		call(t, f, rnd, 9, 2)
		if got := r.Drain(func(*Record) {}); got != 1 {
			t.Fatalf("tracer word %#x: read %d records, want 1", v, got)
		}
	}

	// Lossy: a waiting pad goes on.
	atomic.StoreUint32(tracer, 1234)
	done = async(3)
	for waiters(r) == 0 {
		runtime.Gosched()
	}
	r.SetLossy()
	<-done
	if got := r.Drain(func(*Record) {}); got != 1 || waiters(r) != 0 {
		t.Fatalf("read %d records, %d waiting; want 1, 0", got, waiters(r))
	}
}

// A sync point (Spec.SyncPoint, the program's write to the terminal)
// waits, once the ring has its waits there (SyncAtWrites), until the
// reader has passed every record before it; the pads writing records
// wait no more. Its condition (an fd of the terminal's) holds or it goes
// on at once, as it does with nothing unread or before SyncAtWrites.
func TestPadSyncPoint(t *testing.T) {
	noGC(t)
	const n = 16
	f, r, mem := padUnderTest(t, n, false, func(s *Spec) { s.Sync = true })
	atomic.StoreUint32((*uint32)(unsafe.Pointer(&mem[OffTracer])), 1234)
	_, cond, _ := compileSpec(t, "write if (u32)arg1 < 3")
	code, _, err := Build(Spec{ID: 8, Addr: 0x402000, Cond: cond, SyncPoint: true,
		Ring: uint64(uintptr(unsafe.Pointer(&mem[0]))), Records: n,
		Displaced: func(uint64) ([]byte, error) { return []byte{0xc3}, nil }}, 0x20000)
	if err != nil {
		t.Fatal(err)
	}
	sp := jitFunc(t, code)
	rnd := rand.New(rand.NewSource(9))
	// Before SyncAtWrites: records unread, the sync point goes on.
	call(t, f, rnd, 9, 0)
	call(t, sp, rnd, 1, 0)

	r.SyncAtWrites(1)
	for i := range 3 {
		call(t, f, rnd, 9, uint64(i)) // no wait after the record
	}
	call(t, sp, rnd, 7, 0) // not the terminal's fd
	if waiters(r) != 0 || r.Reserved() != 4 {
		t.Fatalf("waiters %d, reserved %d; want 0, 4", waiters(r), r.Reserved())
	}
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer close(done)
		call(t, sp, rand.New(rand.NewSource(10)), 1, 0)
	}()
	// The write waits until the records before it are read; then,
	// nothing unread, another goes on at once.
	heldUntilDrained(t, r, done, 4)
	call(t, sp, rnd, 2, 0)
	if waiters(r) != 0 || r.Reserved() != 4 || r.Waited() != 0 {
		t.Fatalf("waiters %d, reserved %d, waited for room %d; want 0, 4, 0", waiters(r), r.Reserved(), r.Waited())
	}
}

// heldUntilDrained checks that the call closing done waits (counted in
// OffWaiters: its own word, no timing) and goes on only after a drain,
// which reads want records.
func heldUntilDrained(t *testing.T, r *Ring, done chan struct{}, want int) {
	t.Helper()
	for waiters(r) == 0 {
		runtime.Gosched()
	}
	select {
	case <-done:
		t.Fatal("the call went on before a drain")
	default:
	}
	if got := r.Drain(func(*Record) {}); got != want {
		t.Fatalf("read %d records, want %d", got, want)
	}
	<-done
}
