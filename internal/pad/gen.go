package pad

import (
	"fmt"

	"github.com/utap/utap/internal/bytecode"
	"github.com/utap/utap/internal/x86"
	"github.com/utap/utap/probe"
)

// MaxSize is the bytes reserved for one pad in its area.
const MaxSize = 1024

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
	// Displaced returns the displaced instructions relocated to run at an
	// address, with the jump back (ssol.Displaced.Code).
	Displaced func(at uint64) ([]byte, error)
}

// Frame slots, 8 bytes each, from rbx: the registers as the probed
// instruction saw them in hardware order (0 rax ... 15 r15, 4 the
// original rsp), the flags, the fetched values, then the programs'
// virtual registers (bytecode.NativeVRegBase).
const (
	slotFlags = 16
	slotVals  = 17
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
}

// Check says whether s can be a pad, as far as its programs go: any
// error wraps bytecode.ErrNotNative or says why. It assembles nothing:
// the engine asks it of every site before it places any.
func Check(s Spec) error {
	if _, err := frameSize(s); err != nil {
		return err
	}
	for _, p := range append([]*bytecode.Program{s.Cond}, s.Fetches...) {
		if p != nil {
			if err := p.CheckNative(s.ABI); err != nil {
				return err
			}
		}
	}
	return nil
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
	for _, p := range append([]*bytecode.Program{s.Cond}, s.Fetches...) {
		if p != nil {
			vregs = max(vregs, p.Regs())
		}
	}
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
//	reserve: i = xadd(head, 1); claim: cmpxchg(seq, i → i|Busy), else drop
//	write tsc, fs base, site, values; commit: seq = i+1
//	restore; the displaced instructions; jmp back
func Build(s Spec, at uint64) ([]byte, Layout, error) {
	code, lay, err := probeCode(s)
	if err != nil {
		return nil, lay, err
	}
	disp, err := s.Displaced(at + uint64(len(code)))
	if err != nil {
		return nil, lay, err
	}
	if len(code)+len(disp) > MaxSize {
		return nil, lay, fmt.Errorf("pad: %d bytes, at most %d", len(code)+len(disp), MaxSize)
	}
	lay.Displaced = len(code)
	return append(code, disp...), lay, nil
}

// probeCode assembles everything before the displaced instructions.
func probeCode(s Spec) ([]byte, Layout, error) {
	var lay Layout
	frame, err := frameSize(s)
	if err != nil {
		return nil, lay, err
	}
	a := x86.NewAsm()
	down := redZone + frame
	a.Lea(x86.RSP, x86.Mem{Base: x86.RSP, Disp: -down})
	for r := x86.RAX; r <= x86.R15; r++ {
		if r != x86.RSP {
			a.Store(slot(r), r)
		}
	}
	raxSaved := a.NewLabel()
	a.Bind(raxSaved)
	a.Lea(x86.RAX, x86.Mem{Base: x86.RSP, Disp: down})
	a.Store(slot(x86.RSP), x86.RAX)
	// The arithmetic flags by seto+lahf, not pushfq: a thread the tracer
	// single-steps here would push the trap flag, and popfq would set it
	// again, a SIGTRAP nobody expects. The pad changes no other flag.
	a.Raw(0x0f, 0x90, 0xc0) // seto %al
	a.Raw(0x9f)             // lahf
	a.Store(x86.Mem{Base: x86.RSP, Disp: 8 * slotFlags}, x86.RAX)
	saved := a.NewLabel()
	a.Bind(saved)
	a.MovRR(x86.RBX, x86.RSP)

	done := a.NewLabel()
	if s.Cond != nil {
		if err := s.Cond.Native(a, s.ABI, s.Addr); err != nil {
			return nil, lay, err
		}
		a.RR(x86.TEST, x86.RAX, x86.RAX)
		a.Jcc(x86.E, done)
	}
	if s.Count {
		if s.ID >= MaxCounted {
			return nil, lay, fmt.Errorf("pad: site %d has no counter (at most %d)", s.ID, MaxCounted)
		}
		// A record instead while the tracer asks (OffDivert): a vfork
		// child's calls are told from the parent's by the record's fs
		// base and index.
		rec := a.NewLabel()
		a.MovRI(x86.RSI, s.Ring)
		a.Load(x86.RAX, x86.Mem{Base: x86.RSI, Disp: OffDivert})
		a.RR(x86.TEST, x86.RAX, x86.RAX)
		a.Jcc(x86.NE, rec)
		a.MovRI(x86.RSI, s.Ring+uint64(CountOff(s.Records, int(s.ID))))
		a.LockInc(x86.Mem{Base: x86.RSI})
		a.Jmp(done)
		a.Bind(rec)
		bare := s
		bare.Fetches = nil
		emitRecord(a, bare, done)
	} else {
		for i, f := range s.Fetches {
			if err := f.Native(a, s.ABI, s.Addr); err != nil {
				return nil, lay, err
			}
			a.Store(x86.Mem{Base: x86.RBX, Disp: 8 * int32(slotVals+i)}, x86.RAX)
		}
		emitRecord(a, s, done)
	}
	a.Bind(done)
	// Restore: flags first (the loads after change none), rbx last.
	// add $0x7f,%al overflows exactly when seto saved 1; sahf sets the
	// others.
	a.Load(x86.RAX, x86.Mem{Base: x86.RBX, Disp: 8 * slotFlags})
	a.Raw(0x04, 0x7f) // add $0x7f,%al
	a.Raw(0x9e)       // sahf
	for r := x86.RAX; r <= x86.R15; r++ {
		if r != x86.RSP && r != x86.RBX {
			a.Load(r, slot(r))
		}
	}
	a.Load(x86.RBX, slot(x86.RBX))
	a.Lea(x86.RSP, x86.Mem{Base: x86.RSP, Disp: down})
	code, err := a.Assemble()
	if err != nil {
		return nil, lay, err
	}
	return code, Layout{Saved: a.Offset(saved), RaxSaved: a.Offset(raxSaved), Down: down}, nil
}

func slot(r x86.Reg) x86.Mem { return x86.Mem{Base: x86.RSP, Disp: 8 * int32(r)} }

// emitRecord reserves, claims, fills and commits a record (ring.go's
// protocol), or counts a drop (and marks its hole when one was reserved).
func emitRecord(a *x86.Asm, s Spec, done x86.Label) {
	n := int32(s.Records)
	a.MovRI(x86.RSI, s.Ring)
	// A full ring drops without reserving: no hole for the reader.
	full := a.NewLabel()
	// The tail first: head, read after it, can only be as far or further
	// (read the other way, a tail published in between would make
	// head - tail negative, a huge unsigned: a full ring that is not).
	a.Load(x86.RCX, x86.Mem{Base: x86.RSI, Disp: OffTail})
	a.Load(x86.RAX, x86.Mem{Base: x86.RSI, Disp: OffHead})
	a.RR(x86.SUB, x86.RAX, x86.RCX)
	a.RI(x86.CMP, x86.RAX, n)
	a.Jcc(x86.AE, full)
	a.MovRI(x86.RCX, 1)
	a.LockXadd(x86.Mem{Base: x86.RSI, Disp: OffHead}, x86.RCX) // rcx = i
	// rdi = the record: ring + HeaderSize + (i & (n-1)) * RecSize. Its
	// seq word holds seq - (i & (n-1)) (ring.go): free for i reads
	// i &^ (n-1), claimed (i|Busy) &^ (n-1).
	a.MovRR(x86.RDI, x86.RCX)
	a.RI(x86.AND, x86.RDI, n-1)
	a.MovRR(x86.RAX, x86.RCX)
	a.RR(x86.SUB, x86.RAX, x86.RDI)
	a.RI(x86.SHL, x86.RDI, 6) // RecSize
	a.RR(x86.ADD, x86.RDI, x86.RSI)
	a.MovRI(x86.R8, Busy)
	a.RR(x86.OR, x86.R8, x86.RAX)
	a.LockCmpxchg(x86.Mem{Base: x86.RDI, Disp: HeaderSize + RecSeq}, x86.R8)
	drop := a.NewLabel()
	a.Jcc(x86.NE, drop)
	// rdtsc writes rdx:rax.
	a.Rdtsc()
	a.RI(x86.SHL, x86.RDX, 32)
	a.RR(x86.OR, x86.RAX, x86.RDX)
	a.Store(x86.Mem{Base: x86.RDI, Disp: HeaderSize + RecTSC}, x86.RAX)
	a.Rdfsbase(x86.RAX)
	a.Store(x86.Mem{Base: x86.RDI, Disp: HeaderSize + RecFS}, x86.RAX)
	a.MovRI(x86.RAX, uint64(s.ID))
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
	a.Store(x86.Mem{Base: x86.RDI, Disp: HeaderSize + RecSeq}, x86.RAX)
	a.Jmp(done)

	a.Bind(full)
	a.LockInc(x86.Mem{Base: x86.RSI, Disp: OffDrops})
	a.Jmp(done)

	a.Bind(drop)
	a.LockInc(x86.Mem{Base: x86.RSI, Disp: OffDrops})
	// mark[i & (n-1)] = i+1
	a.MovRR(x86.RDI, x86.RCX)
	a.RI(x86.AND, x86.RDI, n-1)
	a.RI(x86.SHL, x86.RDI, 3)
	a.RR(x86.ADD, x86.RDI, x86.RSI)
	a.Lea(x86.RAX, x86.Mem{Base: x86.RCX, Disp: 1})
	a.Store(x86.Mem{Base: x86.RDI, Disp: int32(MarkOff(int(n), 0))}, x86.RAX)
}
