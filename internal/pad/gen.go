package pad

import (
	"fmt"
	"slices"

	"github.com/utap/utap/internal/bytecode"
	"github.com/utap/utap/internal/x86"
	"github.com/utap/utap/probe"
)

// MaxSize is the bytes reserved for one pad in its area (SizeOf): an
// entry pad that hijacks its return holds the shadow stack's push too,
// and its return pad follows. A pad that reads memory gets twice as
// much: each read is a copy loop and a system call sequence.
const MaxSize = 2048

// SizeOf is the bytes reserved for s's pad.
func SizeOf(s Spec) int {
	if reads(s) {
		return 2 * MaxSize
	}
	return MaxSize
}

// maxFrame bounds the frame a pad pushes on the thread's stack.
const maxFrame = 1024

// redZone is the System V red zone below rsp, which a leaf function may
// be using: the pad's frame goes below it.
const redZone = 128

// Spec is what a pad needs to know about its site.
type Spec struct {
	ID      uint32 // the records' site id
	Addr    uint64 // the probed instruction (reg("rip"))
	ABI     probe.ABI
	Cond    *bytecode.Program // nil: always
	Fetches []*bytecode.Program
	Ring    uint64 // the ring's address in the process
	Records int    // its records (a power of two)
	// Count: add one to the site's counter in the ring instead of writing
	// a record (a counting trace; the fetches are not evaluated).
	Count bool
	// Sync: after its record the pad waits, while the ring asks for it
	// (OffSync), until the reader has passed it (emitSync); without, its
	// code has no such wait (most traces: it is bytes in every pad).
	Sync bool
	// Displaced returns the displaced instructions relocated to run at an
	// address, with the jump back (ssol.Displaced.Code).
	Displaced func(at uint64) ([]byte, error)
	// Hijack: the entry of a function with a return probe; its return
	// address goes on the thread's shadow stack (retpad.go).
	Hijack *Hijack
	// Kind is the records' kind (KindEntry, KindReturn).
	Kind uint8
	// Restore makes the pad an unwinder's (emitRestore, with Hijack's
	// shadow area): no condition, values or record.
	Restore bool
	// HijackOnly: the entry pad of a return probe without an entry probe
	// only hijacks the return (Hijack): no record, no count.
	HijackOnly bool
	// NoReads: the process may not make the system calls a read needs
	// (a seccomp filter of its own): a program that reads is refused.
	NoReads bool
	// Agg: add the hit to its key's slot in a table rather than write a
	// record (agg.go).
	Agg *AggSite
	// Sys: a system call pad (syspad.go).
	Sys *SysSpec
	// Open: an entry pad with a return pad that may amend its record
	// (Amend): the record is committed Open, and its tsc is the one the
	// shadow stack keeps, which tells the return pad the record is its
	// entry's. At most MaxOpenValues values.
	Open bool
	// SyncPoint: a libc write the program's terminal output goes
	// through: no record; while the ring asks (SyncAtWrites), the pad
	// waits until the reader has passed every record before it, so the
	// trace's lines come before what the program writes.
	SyncPoint bool
	// Amend: a return pad with no condition and no values but the
	// return value, whose entry's pad is Open: it adds the return to
	// the entry's record when that is the ring's last, unread (emitAmend).
	Amend bool
	// Extra: values past the record's, plain integers (no read, no
	// string), at most MaxExtra: the pad keeps them in the string part of
	// value ExtraSlot, which holds no string (extras.go).
	Extra     []*bytecode.Program
	ExtraSlot int
	// Trap: an internal breakpoint of the tracer's, as a pad that stops
	// the thread at an int3 only while the tracer lives (trap.go): no
	// condition, values or record.
	Trap bool
}

// MaxOpenValues is the values an Open entry's record may hold: the
// return takes the last two.
const MaxOpenValues = MaxValues - 2

// Frame slots, 8 bytes each, from rbx: the registers as the probed
// instruction saw them in hardware order (0 rax ... 15 r15, 4 the
// original rsp), the flags, the fetched values, then the programs'
// virtual registers (bytecode.NativeVRegBase).
const (
	slotFlags = 16
	slotVals  = 17
	// slotFaults: bit i set when fetch i's read failed (Record.Faults);
	// slot bytecode.NativePidSlot (21) caches the pid for the reads,
	// bytecode.NativeAliveSlot (23) points to the tracer's liveness word.
	slotFaults = 22
)

// Layout is where a pad's parts are, for a tracer that finds a thread
// faulting in one: until Saved the pad has changed nothing but rsp (moved
// down by Down), from Displaced on it runs the displaced instructions.
type Layout struct {
	Saved int
	// RaxSaved: from here rax is no longer the thread's, its value is in
	// the frame's first word, at the moved rsp.
	RaxSaved  int
	Displaced int
	Down      int32
	toTramp   int // a hijacking pad's jmp to its trampoline (Build)
	// Fixups: a load at At that may fault (a read of the process's
	// memory), and where the tracer sends a thread it faulted (To).
	Fixups []Fixup
	// Trap is a trap pad's int3 (Spec.Trap), 0 in any other pad.
	Trap int
}

// Fixup is one entry of a pad's exception table, offsets in the pad.
type Fixup struct{ At, To int }

// Check says whether s can be a pad, as far as its programs go: any
// error wraps bytecode.ErrNotNative or says why. It assembles nothing:
// the engine asks it of every site before it places any.
func Check(s Spec) error {
	if _, err := frameSize(s); err != nil {
		return err
	}
	for _, p := range programs(s) {
		if err := p.CheckNative(s.ABI); err != nil {
			return err
		}
	}
	if s.SyncPoint && (len(s.Fetches) > 0 || s.Count || s.Agg != nil || s.Hijack != nil || s.Sys != nil) {
		return fmt.Errorf("pad: a sync point writes no record")
	}
	if s.Trap && (s.Cond != nil || len(s.Fetches) > 0 || s.Count || s.Agg != nil || s.Hijack != nil || s.Sys != nil || s.SyncPoint) {
		return fmt.Errorf("pad: a trap pad only traps")
	}
	if err := checkExtra(s); err != nil {
		return err
	}
	if s.Kind != KindReturn && len(ArgsOf(programs(s)...)) > 0 {
		return fmt.Errorf("pad: an entry's argument read where the entry is (only a return pad has them)")
	}
	if s.NoReads && reads(s) {
		return fmt.Errorf("%w: a memory read (a system call) under the process's seccomp filter", bytecode.ErrNotNative)
	}
	return nil
}

// programs are the condition (if any) and the fetches as the pad runs
// them natively (a string's address: nativeOf).
func programs(s Spec) []*bytecode.Program {
	var ps []*bytecode.Program
	if s.Cond != nil {
		ps = append(ps, s.Cond)
	}
	for _, f := range s.Fetches {
		if f != nil { // nil: a value the pad computes itself (a return's)
			ps = append(ps, nativeOf(f))
		}
	}
	return append(ps, s.Extra...)
}

// frameSize is the bytes of s's frame below the red zone, after the
// limits a pad has: its values, its ring, its frame.
func frameSize(s Spec) (int32, error) {
	if len(s.Fetches) > MaxValues {
		return 0, fmt.Errorf("pad: %d values, a record holds %d", len(s.Fetches), MaxValues)
	}
	if s.Records <= 0 || s.Records&(s.Records-1) != 0 {
		return 0, fmt.Errorf("pad: a ring of %d records", s.Records)
	}
	vregs := 0
	for _, p := range programs(s) {
		vregs = max(vregs, p.FrameWords())
	}
	if strMask(s) != 0 || s.Sys != nil {
		vregs = max(vregs, strScratch)
	}
	if s.Sys != nil {
		vregs = max(vregs, msgScratch+1) // emitIov's, emitMsg's
	}
	vregs += topWords
	frame := int32(8 * (bytecode.NativeVRegBase + vregs))
	frame = (frame + 15) &^ 15
	if frame > maxFrame {
		return 0, fmt.Errorf("pad: a frame of %d bytes, at most %d", frame, maxFrame)
	}
	return frame, nil
}

// Build returns the pad of s assembled to run at `at`:
//
//	lea -(128+frame)(%rsp),%rsp; save every register and the flags (seto, lahf)
//	condition (native code) → false: skip to restore
//	fetches (native code) → frame
//	reserve: cmpxchg(head, i → i+1) while head-tail < n, else wait (record.go);
//	claim: cmpxchg(seq, i → i|Busy), else drop
//	write tsc, fs base, site, values; commit: seq = i+1
//	restore; the displaced instructions; jmp back
//
// A pad that hijacks its function's return pushes the shadow entry after
// its record, restores, and jumps to its trampoline (trampoline), whose
// call of the displaced instructions ends where its return pad begins.
func Build(s Spec, at uint64) ([]byte, Layout, error) {
	code, lay, err := probeCode(s, at)
	if err != nil {
		return nil, lay, err
	}
	disp, err := s.Displaced(at + uint64(len(code)))
	if err != nil {
		return nil, lay, err
	}
	if len(code)+len(disp) > SizeOf(s) {
		return nil, lay, fmt.Errorf("pad: %d bytes, at most %d", len(code)+len(disp), SizeOf(s))
	}
	lay.Displaced = len(code)
	// A new array (clipped): the trampoline's patch must not reach the
	// assembler's shape cache, which keeps the one it returned.
	code = append(slices.Clip(code), disp...)
	if hijacks(s) {
		return trampoline(code, lay, s.Hijack.Return-at)
	}
	return code, lay, nil
}

// hijacks says whether s's entry pad hijacks its function's return.
func hijacks(s Spec) bool { return s.Hijack != nil && !s.Restore }

// trampSize is the trampoline's bytes: lea 8(%rsp),%rsp; call rel32.
const trampSize = 10

// trampoline ends a hijacking entry pad (code; its return pad end bytes
// from its start) with the trampoline its hijacked path jumps to: the
// return address popped, the displaced instructions called, so that the
// function's `ret` comes back to the return pad right after the call,
// as the return stack buffer predicts (a return address swapped in
// memory is a mispredicted ret each call), and the return pad's own ret
// to the real address is predicted too: the caller's call pushed it.
// A CPU's shadow stack (CET) sees calls and returns that match.
func trampoline(code []byte, lay Layout, end uint64) ([]byte, Layout, error) {
	if end > MaxSize*4 || len(code)+trampSize > int(end) {
		return nil, lay, fmt.Errorf("pad: %d bytes and a trampoline, %d before the return pad", len(code), end)
	}
	n := int(end)
	for len(code) < n-trampSize {
		code = append(code, 0xcc)
	}
	code = append(code, 0x48, 0x8d, 0x64, 0x24, 0x08) // lea 8(%rsp),%rsp
	code = append(code, 0xe8, 0, 0, 0, 0)             // call rel32
	putRel32(code, n-4, lay.Displaced)
	putRel32(code, lay.toTramp+1, n-trampSize)
	return code, lay, nil
}

// probeCode assembles everything before the displaced instructions, to
// run at `at`.
func probeCode(s Spec, at uint64) ([]byte, Layout, error) {
	var lay Layout
	if err := Check(s); err != nil {
		return nil, lay, err
	}
	frame, err := frameSize(s)
	if err != nil {
		return nil, lay, err
	}
	a := x86.NewAsm()
	down := redZone + frame
	regs := entryRegs(s)
	raxSaved, saved := saveRegs(a, down, regs)
	if s.Open {
		a.StoreI32(tscSlot(frame), 0) // no record: the hijack reads the clock
	}

	emitReadSetup(a, s)
	done := a.NewLabel()
	var trap x86.Label // Spec.Trap's int3
	var secs []rseqSection
	if s.Restore {
		emitRestore(a, s.Hijack)
	} else if s.HijackOnly {
		// The return pad does it all.
	} else if s.Cond != nil {
		if err := s.Cond.Native(a, s.ABI, s.Addr); err != nil {
			return nil, lay, err
		}
		a.RR(x86.TEST, x86.RAX, x86.RAX)
		a.Jcc(x86.E, done)
	}
	if s.Restore || s.HijackOnly {
		// emitRestore did it all, or the return pad will.
	} else if s.Count {
		if s.ID >= MaxCounted {
			return nil, lay, fmt.Errorf("pad: site %d has no counter (at most %d)", s.ID, MaxCounted)
		}
		// A record instead while the tracer asks (OffDivert): a vfork
		// child's calls are told from the parent's by the record's fs
		// base and index.
		rec := a.NewLabel()
		a.MovRI(x86.R11, s.Ring)
		a.Load(x86.RAX, x86.Mem{Base: x86.R11, Disp: OffDivert})
		a.RR(x86.TEST, x86.RAX, x86.RAX)
		a.Jcc(x86.NE, rec)
		if cpuCounts(s) {
			secs = emitCPUCount(a, s)
		} else {
			a.MovRI(x86.RCX, s.Ring+uint64(CountOff(s.Records, int(s.ID))))
			a.LockInc(x86.Mem{Base: x86.RCX})
		}
		a.Jmp(done)
		a.Bind(rec)
		bare := s
		bare.Fetches = nil
		// The record's wait uses every register: a lean pad saves the
		// others around it.
		rest, recorded := allRegs&^regs, a.NewLabel()
		saveSet(a, rest)
		emitRecord(a, bare, recorded)
		a.Bind(recorded)
		restoreSet(a, rest)
	} else if s.SyncPoint {
		emitSyncPoint(a, s, done)
	} else if s.Trap {
		trap = emitTrap(a, s, done)
	} else {
		if err := emitFetches(a, s, frame); err != nil {
			return nil, lay, err
		}
		if s.Agg != nil {
			emitAgg(a, s)
		} else {
			emitRecord(a, s, done)
		}
	}
	a.Bind(done)
	var toTramp x86.Label
	if hijacks(s) {
		// Hijacked: the registers back, then the trampoline calls the
		// displaced instructions (Build). Missed: counted, and on to
		// them as any pad goes.
		missed := a.NewLabel()
		emitHijack(a, s.Hijack, s, frame, missed)
		restoreRegs(a, down, regs)
		toTramp = a.NewLabel()
		a.Bind(toTramp)
		a.Raw(0xe9, 0, 0, 0, 0) // jmp rel32, patched by Build
		a.Bind(missed)
		a.MovRI(x86.RCX, s.Hijack.Ring+OffRetMissed)
		a.LockInc(x86.Mem{Base: x86.RCX})
	}
	restoreRegs(a, down, regs)
	var over x86.Label
	if len(secs) > 0 {
		// On to the displaced instructions, past the critical sections'
		// exits and descriptors.
		over = a.NewLabel()
		a.Bind(over)
		a.Raw(0xe9, 0, 0, 0, 0) // jmp rel32, patched below
		emitRseqExits(a, secs)
	}
	code, err := a.Assemble()
	if err != nil {
		return nil, lay, err
	}
	if len(secs) > 0 {
		code = rseqDescriptors(code, a, secs, at)
		putRel32(code, a.Offset(over)+1, len(code))
	}
	lay = Layout{Saved: a.Offset(saved), RaxSaved: a.Offset(raxSaved), Down: down, Fixups: fixupsOf(a)}
	if hijacks(s) {
		lay.toTramp = a.Offset(toTramp)
	}
	if s.Trap {
		lay.Trap = a.Offset(trap)
	}
	return code, lay, nil
}

// topWords are the frame's last words, past the programs' virtual
// registers, which no program touches: an Open entry pad's tsc (tscSlot)
// or a return pad's entry tsc (etscSlot, the second), then the lengths
// of the sized strings (bufLenSlot) and the extra values (extraSlot).
const topWords = 2 + MaxValues + MaxExtra

func topSlot(frame int32, k int) x86.Mem { return x86.Mem{Base: x86.RBX, Disp: frame - 8*int32(k+1)} }

// tscSlot is an Open entry pad's frame word for its record's tsc.
func tscSlot(frame int32) x86.Mem { return topSlot(frame, 0) }

// bufLenSlot holds fetch i's length when it is a sized string, from its
// program (bytecode.NativeBufLen) to the read (emitStrs).
func bufLenSlot(frame int32, i int) x86.Mem { return topSlot(frame, 2+i) }

// emitFetches computes each fetch of s into its value slot (a string's
// address, a sized string's length to bufLenSlot), with its fault bit.
func emitFetches(a *x86.Asm, s Spec, frame int32) error {
	for i, f := range s.Fetches {
		q := nativeOf(f)
		if err := q.Native(a, s.ABI, s.Addr); err != nil {
			return err
		}
		a.Store(x86.Mem{Base: x86.RBX, Disp: 8 * int32(slotVals+i)}, x86.RAX)
		if q.Reads() {
			faultBit(a, i)
		}
		if f.IsBuf() {
			a.Load(x86.RAX, x86.Mem{Base: x86.RBX, Disp: 8 * bytecode.NativeBufLen})
			a.Store(bufLenSlot(frame, i), x86.RAX)
		}
	}
	for k, f := range s.Extra {
		if err := f.Native(a, s.ABI, s.Addr); err != nil {
			return err
		}
		a.Store(extraSlot(frame, k), x86.RAX)
	}
	return nil
}

// fixupsOf is a's exception table as offsets in its code (assembled).
func fixupsOf(a *x86.Asm) []Fixup {
	var fs []Fixup
	for _, f := range a.Fixups {
		fs = append(fs, Fixup{At: a.Offset(f.At), To: a.Offset(f.To)})
	}
	return fs
}

// emitReadSetup readies the frame of a pad whose programs read: no pid
// cached, no fault yet, the tracer's liveness word (emitAlive).
func emitReadSetup(a *x86.Asm, s Spec) {
	if reads(s) {
		emitReadFrame(a, s)
	}
}

// reads says whether a program of s reads memory (bytecode's
// process_vm_readv: a bad address is a failed read, never a fault).
func reads(s Spec) bool {
	for _, p := range programs(s) {
		if p.Reads() {
			return true
		}
	}
	return strMask(s) != 0 || s.Sys != nil
}

// faultBit ors fetch i's fault flag (RDX, 0 or 1) into the frame's mask.
func faultBit(a *x86.Asm, i int) {
	if i > 0 {
		a.RI(x86.SHL, x86.RDX, int32(i))
	}
	m := x86.Mem{Base: x86.RBX, Disp: 8 * slotFaults}
	a.Load(x86.RCX, m)
	a.RR(x86.OR, x86.RCX, x86.RDX)
	a.Store(m, x86.RCX)
}

func slot(r x86.Reg) x86.Mem { return x86.Mem{Base: x86.RSP, Disp: 8 * int32(r)} }
