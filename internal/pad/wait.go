package pad

import (
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The reader's side of the waits (ring.go): waking the pads that wait
// for room, its heartbeat, its own sleep.

// word32 is the futex word (the low half, little-endian) of the header
// word at off.
func (r *Ring) word32(off int) *uint32 { return (*uint32)(unsafe.Pointer(&r.mem[off])) }

// freed runs after each drain has published its tail: the pads waiting
// for room are woken (one load when none waits), and a pad's verdict
// that the tracer is gone is taken back. more: the drain stopped at its
// bound with records left, and the reader goes on at once: the waiters
// are then woken only once a quarter of the least room of the pads read
// is free (the ring's; a string fetch's, StrRecords; a system call
// pad's), not after every batch: a wake-up is a system call here and a
// switch there (a wake per batch was 5% of the default trace's tracer).
// A quarter of the ring for all kept a string fetch's pads asleep until
// the reader had read everything, the two taking turns: 20% of such a
// trace's time.
func (r *Ring) freed(more bool) {
	if atomic.LoadUint64(r.word(OffWaiters)) != 0 && (!more || r.sync || r.tail-r.wokeAt >= r.room/4) {
		r.wokeAt = r.tail
		r.wakeWaiters()
	}
	if atomic.LoadUint64(r.word(OffGaveUp)) != 0 {
		atomic.StoreUint64(r.word(OffGaveUp), 0)
	}
}

func (r *Ring) wakeWaiters() {
	atomic.AddUint64(r.word(OffRoom), 1)
	futex(r.word32(OffRoom), futexWake, 1<<30, nil)
}

// SetSync makes every pad built for it (Spec.Sync) wait after its record
// until the reader has passed it (emitSync), for the ring's life: a
// trace written to the terminal the program writes to shows a call's
// line before what the program prints next. The pad spins for the
// reader spin TSC cycles (SyncSpin for a reader polling on another CPU;
// spinning where the two share one only keeps the reader off it), then
// sleeps, and the reader wakes it at once (freed).
func (r *Ring) SetSync(spin uint64) {
	r.sync = true
	atomic.StoreUint64(r.word(OffSync), max(spin, 1))
}

// SyncAtWrites moves the ring's waits from every record to its sync
// points (Spec.SyncPoint), which wait for the reader to pass every
// record before them: the program's writes to the terminal, the only
// place its output can overtake a line. The sync points wait from here
// on (OffSyncAt first), the pads after their records no more; the reader
// still wakes the waiting ones at every drain.
func (r *Ring) SyncAtWrites(spin uint64) {
	r.sync = true
	atomic.StoreUint64(r.word(OffSyncAt), max(spin, 1))
	atomic.StoreUint64(r.word(OffSync), 0)
}

// SyncSpin is the TSC cycles a waiting pad spins for a reader polling on
// another CPU (SetSync): about 50 µs at 2.5 GHz.
const SyncSpin = 1 << 17

// Beat is the reader's heartbeat: while it moves, a pad waits for room.
func (r *Ring) Beat() { atomic.AddUint64(r.word(OffAlive), 1) }

// SetLossy makes a full ring drop from now on, and the pads waiting
// drop too: --lossy, or the pads about to be taken out (a thread
// stepped out of one must not wait for a reader the tracer holds).
func (r *Ring) SetLossy() {
	atomic.StoreUint64(r.word(OffLossy), 1)
	r.wakeWaiters()
}

// Waited is the times pads found the ring full and waited.
func (r *Ring) Waited() uint64 { return atomic.LoadUint64(r.word(OffWaited)) }

// Arm sets the reader's sleep flag and says whether the ring is empty:
// if not, the reader must not sleep (Disarm). The flag's store is
// locked, so a pad whose reservation this misses reads the flag set.
func (r *Ring) Arm() bool {
	atomic.StoreUint32(r.word32(OffSleep), 1)
	return r.Reserved() == r.tail
}

// Disarm clears the reader's sleep flag and wakes its sleeper, if any.
func (r *Ring) Disarm() {
	atomic.StoreUint32(r.word32(OffSleep), 0)
	futex(r.word32(OffSleep), futexWake, 1<<30, nil)
}

// Sleep waits at most d for a pad to take the sleep flag (at once if
// one has).
func (r *Ring) Sleep(d time.Duration) {
	ts := unix.NsecToTimespec(int64(d))
	futex(r.word32(OffSleep), futexWait, 1, &ts)
}

func futex(addr *uint32, op, val int, ts *unix.Timespec) {
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), uintptr(op), uintptr(val), uintptr(unsafe.Pointer(ts)), 0, 0)
}
