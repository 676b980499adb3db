package pad

import "github.com/utap/utap/internal/x86"

// Linux's system call numbers and futex operations the pads use (shared
// futexes: the ring is a memfd mapped by the process and the tracer).
const (
	sysFutex  = 202
	futexWait = 0
	futexWake = 1
)

// waitNs bounds one futex wait of a pad for room: between two waits it
// checks the tracer's heartbeat.
const waitNs = 100_000_000

// staleShift: a pad gives the tracer up once its heartbeat has not moved
// for 1<<staleShift TSC cycles (0.5 to 1 s at 2 to 4 GHz).
const staleShift = 31

func ringMem(off int32) x86.Mem { return x86.Mem{Base: x86.RSI, Disp: off} }

// emitRecord reserves, claims, fills and commits a record (ring.go's
// protocol). A full ring makes the thread wait for room (emitFull);
// a claim that fails (the reader took the slot for a drop) drops, counts
// and marks its hole.
func emitRecord(a *x86.Asm, s Spec, done x86.Label) {
	n := int32(s.Records)
	a.MovRI(x86.RSI, s.Ring)
	full, retry, again := a.NewLabel(), a.NewLabel(), a.NewLabel()
	a.Bind(retry)
	// The tail first: head, read after it, can only be as far or further
	// (read the other way, a tail published in between would make
	// head - tail negative, a huge unsigned: a full ring that is not).
	a.Load(x86.RCX, ringMem(OffTail))
	a.Load(x86.RAX, ringMem(OffHead))
	a.Bind(again)
	a.MovRR(x86.RDX, x86.RAX)
	a.RR(x86.SUB, x86.RDX, x86.RCX)
	a.RI(x86.CMP, x86.RDX, room(s))
	a.Jcc(x86.AE, full)
	// Reserve only a free slot: head moves from i to i+1 while there is
	// room, so a claim fails only for a record the reader gave up on. A
	// failed cmpxchg leaves the current head in rax; a tail read before
	// it can only say full too early, and the full path reads it again.
	a.Lea(x86.R8, x86.Mem{Base: x86.RAX, Disp: 1})
	a.LockCmpxchg(ringMem(OffHead), x86.R8)
	a.Jcc(x86.NE, again)
	a.MovRR(x86.RCX, x86.RAX) // rcx = i
	// Whether the reader sleeps, read after the locked reservation: a
	// reader that sets the flag, then finds no record reserved, misses
	// none (ring.go, Arm).
	a.Load(x86.R9, ringMem(OffSleep))
	// The record (emitSlot): its seq word holds seq - (i & (n-1))
	// (ring.go): free for i reads i &^ (n-1), claimed (i|Busy) &^ (n-1).
	emitSlot(a, n)
	a.MovRI(x86.R8, Busy)
	a.RR(x86.OR, x86.R8, x86.RAX)
	a.LockCmpxchg(x86.Mem{Base: x86.RDI, Disp: HeaderSize + RecSeq}, x86.R8)
	drop := a.NewLabel()
	a.Jcc(x86.NE, drop)
	emitStrs(a, s)
	emitSys(a, s)
	if s.Sys != nil {
		// The TSC sysCode took just after the call: a third rdtsc
		// cost a system call pad a tenth of its time.
		frame, _ := frameSize(s)
		a.Load(x86.RAX, x86.Mem{Base: x86.RBX, Disp: frame + 8})
	} else {
		// rdtsc writes rdx:rax.
		a.Rdtsc()
		a.RI(x86.SHL, x86.RDX, 32)
		a.RR(x86.OR, x86.RAX, x86.RDX)
	}
	a.Store(x86.Mem{Base: x86.RDI, Disp: HeaderSize + RecTSC}, x86.RAX)
	if s.Open {
		frame, _ := frameSize(s)
		a.Store(tscSlot(frame), x86.RAX) // for the shadow stack (emitHijack)
	}
	a.Rdfsbase(x86.RAX)
	a.Store(x86.Mem{Base: x86.RDI, Disp: HeaderSize + RecFS}, x86.RAX)
	emitExtra(a, s)
	a.MovRI(x86.RAX, uint64(s.ID)|uint64(kindOf(s))<<56|strMask(s)<<strShift|extraBits(s))
	if reads(s) {
		a.Load(x86.RDX, x86.Mem{Base: x86.RBX, Disp: 8 * slotFaults})
		a.RI(x86.SHL, x86.RDX, faultShift)
		a.RR(x86.OR, x86.RAX, x86.RDX)
	}
	a.Store(x86.Mem{Base: x86.RDI, Disp: HeaderSize + RecSite}, x86.RAX)
	for i := range s.Fetches {
		a.Load(x86.RAX, x86.Mem{Base: x86.RBX, Disp: 8 * int32(slotVals+i)})
		a.Store(x86.Mem{Base: x86.RDI, Disp: HeaderSize + RecVals + 8*int32(i)}, x86.RAX)
	}
	// The commit, i+1 stored as (i &^ (n-1)) + 1: a plain store, ordered
	// after the others (x86-TSO).
	a.MovRR(x86.RAX, x86.RCX)
	a.RI(x86.AND, x86.RAX, -n)
	a.Lea(x86.RAX, x86.Mem{Base: x86.RAX, Disp: 1})
	if s.Open {
		a.MovRI(x86.RDX, Open)
		a.RR(x86.OR, x86.RAX, x86.RDX)
	}
	a.Store(x86.Mem{Base: x86.RDI, Disp: HeaderSize + RecSeq}, x86.RAX)
	if s.Sync {
		a.MovRR(x86.R15, x86.RCX) // i, for emitSync past the wake's system call
	}
	woken := a.NewLabel()
	a.RR(x86.TEST, x86.R9, x86.R9)
	a.Jcc(x86.E, woken)
	// The reader sleeps: the first pad to take its flag wakes it.
	a.MovRI(x86.RAX, 1)
	a.MovRI(x86.R8, 0)
	a.LockCmpxchg(ringMem(OffSleep), x86.R8)
	a.Jcc(x86.NE, woken)
	emitFutex(a, s.Ring+OffSleep, futexWake, 1)
	a.Bind(woken)
	if s.Sync {
		emitSync(a, s, done)
	}
	a.Jmp(done)

	a.Bind(full)
	emitFull(a, s, retry, done)

	a.Bind(drop)
	a.LockInc(ringMem(OffDrops))
	// mark[i & (n-1)] = i+1
	a.MovRR(x86.RDI, x86.RCX)
	a.RI(x86.AND, x86.RDI, n-1)
	a.RI(x86.SHL, x86.RDI, 3)
	a.RR(x86.ADD, x86.RDI, x86.RSI)
	a.Lea(x86.RAX, x86.Mem{Base: x86.RCX, Disp: 1})
	a.Store(x86.Mem{Base: x86.RDI, Disp: int32(MarkOff(int(n), 0))}, x86.RAX)
}

// emitFull is a full ring's path. Lossy (the tracer's OffLossy), or
// once the tracer is taken for dead (OffGaveUp), it drops and counts.
// Otherwise the thread waits on the futex OffRoom, which the reader
// bumps after freeing records while OffWaiters is not 0, and tries
// again. Each wait is bounded (waitNs); a heartbeat (OffAlive) that has
// not moved for 1<<staleShift cycles means no tracer: the pad sets
// OffGaveUp, and every full ring drops from then on, until a reader
// drains again. A signal ends a wait early (EINTR): the loop goes on.
// The system call clobbers rax, rcx and r11; every register is the
// frame's again at done.
func emitFull(a *x86.Asm, s Spec, retry, done x86.Label) {
	drop, undrop, unwait, wait := a.NewLabel(), a.NewLabel(), a.NewLabel(), a.NewLabel()
	emitDropping(a, drop)
	a.MovRI(x86.RAX, 1)
	a.LockXadd(ringMem(OffWaited), x86.RAX)
	a.LockInc(ringMem(OffWaiters))
	a.Load(x86.R12, ringMem(OffAlive))
	tsc(a, x86.R14)
	a.Bind(wait)
	// The futex word first, then the rest: a reader (or the tracer
	// giving up the wait) that changes them after bumping the word
	// makes the wait return at once.
	a.Load(x86.R13, ringMem(OffRoom))
	emitDropping(a, undrop)
	a.Load(x86.RCX, ringMem(OffTail))
	a.Load(x86.RAX, ringMem(OffHead))
	a.RR(x86.SUB, x86.RAX, x86.RCX)
	a.RI(x86.CMP, x86.RAX, room(s))
	a.Jcc(x86.B, unwait)
	emitWaitOnce(a, s, wait, undrop)

	a.Bind(unwait)
	decWaiters(a, s)
	a.Jmp(retry)
	a.Bind(undrop)
	decWaiters(a, s)
	a.Bind(drop)
	a.LockInc(ringMem(OffDrops))
	a.Jmp(done)
}

// emitSync waits, when the tracer asks for it (OffSync: its lines go to
// the terminal the program writes to), until the reader has passed
// record i (r15): the call's line is written before the program goes
// on, as strace and ltrace show them. It waits as emitFull does, on
// OffRoom (the reader wakes it once the record is read), with the same
// bounds; not once the tracer lets the process go or dies (OffTracer:
// 0, or its thread's robust-list death bit), with the ring lossy or
// given up. Every register is the frame's again at done.
func emitSync(a *x86.Asm, s Spec, done x86.Label) {
	a.MovRI(x86.RSI, s.Ring)
	a.Load(x86.R13, ringMem(OffSync))
	a.RR(x86.TEST, x86.R13, x86.R13)
	a.Jcc(x86.E, done)
	emitSyncWait(a, s, done)
}

// emitSyncPoint is a sync point's wait (Spec.SyncPoint), while the ring
// asks for it (OffSyncAt, its spin): until the reader has passed every
// record reserved before it, emitSync's wait for the last of them.
func emitSyncPoint(a *x86.Asm, s Spec, done x86.Label) {
	a.MovRI(x86.RSI, s.Ring)
	a.Load(x86.R13, ringMem(OffSyncAt))
	a.RR(x86.TEST, x86.R13, x86.R13)
	a.Jcc(x86.E, done)
	a.Load(x86.R15, ringMem(OffHead))
	a.Load(x86.RAX, ringMem(OffTail))
	a.RR(x86.CMP, x86.RAX, x86.R15)
	a.Jcc(x86.AE, done)
	a.RI(x86.SUB, x86.R15, 1)
	emitSyncWait(a, s, done)
}

// emitSyncWait waits until the reader has passed record r15, spinning
// r13 TSC cycles first (emitSync, emitSyncPoint); rsi is the ring.
func emitSyncWait(a *x86.Asm, s Spec, done x86.Label) {
	wait, unwait := a.NewLabel(), a.NewLabel()
	// Spin first, OffSync's cycles (SetSync): a reader polling on
	// another CPU writes the line and passes the record in microseconds,
	// where a futex wait and its wake-up cost the record 18 µs on this
	// project's VM. One thread at a time (OffSpin): eight spinning on
	// two CPUs kept the reader off them (8 threads on a terminal: 46–54
	// µs a call, 33–40 sleeping at once).
	spin, passed, spun, sleep := a.NewLabel(), a.NewLabel(), a.NewLabel(), a.NewLabel()
	a.MovRI(x86.RAX, 0)
	a.MovRI(x86.RDX, 1)
	a.LockCmpxchg(ringMem(OffSpin), x86.RDX)
	a.Jcc(x86.NE, sleep)
	tsc(a, x86.R14)
	a.Bind(spin)
	a.Load(x86.RAX, ringMem(OffTail))
	a.RR(x86.CMP, x86.RAX, x86.R15)
	a.Jcc(x86.A, passed)
	a.Raw(0xf3, 0x90) // pause
	tsc(a, x86.RAX)
	a.RR(x86.SUB, x86.RAX, x86.R14)
	a.RR(x86.CMP, x86.RAX, x86.R13)
	a.Jcc(x86.B, spin)
	a.Jmp(spun)
	a.Bind(passed)
	a.StoreI32(ringMem(OffSpin), 0)
	a.Jmp(done)
	a.Bind(spun)
	a.StoreI32(ringMem(OffSpin), 0)
	a.Bind(sleep)
	a.LockInc(ringMem(OffWaiters))
	a.Load(x86.R12, ringMem(OffAlive))
	tsc(a, x86.R14)
	a.Bind(wait)
	// The futex word first, as emitFull.
	a.Load(x86.R13, ringMem(OffRoom))
	emitDropping(a, unwait)
	emitIfGone(a, unwait)
	a.Load(x86.RAX, ringMem(OffTail))
	a.RR(x86.CMP, x86.RAX, x86.R15)
	a.Jcc(x86.A, unwait)
	emitWaitOnce(a, s, wait, unwait)
	a.Bind(unwait)
	decWaiters(a, s)
}

// emitWaitOnce waits once on OffRoom, whose value the pad read into r13:
// futex(&room, FUTEX_WAIT, r13, &{0, waitNs}), the timespec pushed below
// the frame. Then the tracer's heartbeat (OffAlive, r12 as last seen at
// r14's TSC): moved, the pad waits on (wait); still for 1<<staleShift
// cycles, it sets OffGaveUp and jumps to gaveUp. Clobbers rax, rcx, rdx,
// rdi, r10, r11; rsi is the ring again.
func emitWaitOnce(a *x86.Asm, s Spec, wait, gaveUp x86.Label) {
	moved := a.NewLabel()
	a.MovRI(x86.RAX, waitNs)
	a.Push(x86.RAX)
	a.MovRI(x86.RAX, 0)
	a.Push(x86.RAX)
	a.MovRR(x86.R10, x86.RSP)
	a.MovRR(x86.RDX, x86.R13)
	emitFutex(a, s.Ring+OffRoom, futexWait, -1)
	a.Lea(x86.RSP, x86.Mem{Base: x86.RSP, Disp: 16})
	a.MovRI(x86.RSI, s.Ring)
	a.Load(x86.RAX, ringMem(OffAlive))
	a.RR(x86.CMP, x86.RAX, x86.R12)
	a.Jcc(x86.NE, moved)
	tsc(a, x86.RAX)
	a.RR(x86.SUB, x86.RAX, x86.R14)
	a.RI(x86.SHR, x86.RAX, staleShift)
	a.Jcc(x86.E, wait)
	a.MovRI(x86.RAX, 1)
	a.Store(ringMem(OffGaveUp), x86.RAX)
	a.Jmp(gaveUp)
	a.Bind(moved)
	a.MovRR(x86.R12, x86.RAX)
	tsc(a, x86.R14)
	a.Jmp(wait)
}

// emitSlot leaves in rdi record i's place less HeaderSize (ring rsi +
// (i & (n-1)) * RecSize) and in rax i &^ (n-1), i in rcx.
func emitSlot(a *x86.Asm, n int32) {
	a.MovRR(x86.RDI, x86.RCX)
	a.RI(x86.AND, x86.RDI, n-1)
	a.MovRR(x86.RAX, x86.RCX)
	a.RR(x86.SUB, x86.RAX, x86.RDI)
	a.RI(x86.SHL, x86.RDI, 6) // RecSize
	a.RR(x86.ADD, x86.RDI, x86.RSI)
}

// emitDropping jumps to to when full rings drop (OffLossy: --lossy or the
// pads going; OffGaveUp: the tracer taken for gone). Clobbers rax, rdx.
func emitDropping(a *x86.Asm, to x86.Label) {
	a.Load(x86.RAX, ringMem(OffLossy))
	a.Load(x86.RDX, ringMem(OffGaveUp))
	a.RR(x86.OR, x86.RAX, x86.RDX)
	a.Jcc(x86.NE, to)
}

// futexOwnerDied is the bit the kernel sets in a robust futex word whose
// owner died (FUTEX_OWNER_DIED).
const futexOwnerDied = 0x40000000

// emitIfGone jumps to gone when the ring's liveness word says the
// tracer let the process go (0) or died (FUTEX_OWNER_DIED); rsi holds
// the ring. Clobbers rax.
func emitIfGone(a *x86.Asm, gone x86.Label) {
	a.Load32(x86.RAX, ringMem(OffTracer))
	a.RR(x86.TEST, x86.RAX, x86.RAX)
	a.Jcc(x86.E, gone)
	a.RI(x86.AND, x86.RAX, futexOwnerDied)
	a.Jcc(x86.NE, gone)
}

func decWaiters(a *x86.Asm, s Spec) {
	a.MovRI(x86.RAX, ^uint64(0))
	a.LockXadd(ringMem(OffWaiters), x86.RAX)
}

// tsc puts the time stamp counter in r (rdtsc clobbers rax and rdx).
func tsc(a *x86.Asm, r x86.Reg) {
	a.Rdtsc()
	a.RI(x86.SHL, x86.RDX, 32)
	a.RR(x86.OR, x86.RAX, x86.RDX)
	if r != x86.RAX {
		a.MovRR(r, x86.RAX)
	}
}

// emitFutex calls futex(addr, op, val) (val -1: rdx as set, r10 too); it
// clobbers rax, rcx, rdi, rsi, r11 (and rdx when val is set).
func emitFutex(a *x86.Asm, addr uint64, op uint64, val int64) {
	a.MovRI(x86.RDI, addr)
	a.MovRI(x86.RSI, op)
	if val >= 0 {
		a.MovRI(x86.RDX, uint64(val))
	}
	a.MovRI(x86.RAX, sysFutex)
	a.Raw(0x0f, 0x05) // syscall
}

// kindOf is the kind a pad of s writes in its records.
func kindOf(s Spec) uint8 {
	if s.Sys != nil {
		_, _, _, kind := sysArea(s)
		return kind
	}
	return s.Kind
}
