package pad

import (
	"encoding/binary"
	"fmt"

	"github.com/utap/utap/internal/bytecode"
	"github.com/utap/utap/internal/x86"
)

// Returns in-process. An entry pad whose function has a return probe
// swaps the return address at [rsp] for its return pad's address and
// keeps the real one on the thread's shadow stack, in a private anonymous
// area of the process (fork copies it, so a child's returns find their
// addresses in its own copy). A thread's stack is found by its fs base
// (rdfsbase) in an open-addressing table, its slot claimed with cmpxchg.
// The return pad finds the entry whose saved rsp is the slot `ret` just
// popped (rsp-8), drops the entries above it (a longjmp left them),
// writes the record and jumps to the real return address. Nothing of it
// needs the tracer.

// Record kinds (the high byte of the site word).
const (
	KindEntry  = 0
	KindReturn = 1
	// KindCall: an entry record its return pad amended (Spec.Amend):
	// values 0 and 1 the entry's, 2 the return value, 3 the return's
	// tsc (Record.SplitCall).
	KindCall = 4
)

// The shadow area: a header, then ShadowThreads thread slots, each the
// fs base owning it, its entry count, and depth entries.
const (
	ShadowThreads = 512
	shadowBits    = 9 // log2(ShadowThreads)
	ShadowHeader  = 64
	slotHeader    = 16 // fs base, entries
	// ShadowEntry: rsp at entry (the slot), real return address, tsc,
	// the return pad, then the entry's arguments its return probe reads
	// (Hijack.Args).
	ShadowEntry = 64
	shadowShift = 6 // log2(ShadowEntry)
	entSP       = 0
	entOrig     = 8
	entTSC      = 16
	entRet      = 24
	entArgs     = 32
	// MaxShadowArgs is the entry's arguments a shadow entry keeps.
	MaxShadowArgs = 4
	shadowProbes  = 64 // slots looked at before giving up
	hashMul       = 0x9E3779B97F4A7C15
)

// OffRetMissed, in the ring's header, counts the calls whose return was
// not hijacked: the thread's shadow stack full (deep recursion) or no
// slot left for it. In the ring, the tracer reads it after the process
// is gone.
const OffRetMissed = 704

// MaxReturnSize is the bytes reserved for a return pad, after its entry
// pad: the record's code with its wait, the fetches, the shadow stack's
// scan.
const MaxReturnSize = 2048

// ReturnSizeOf is the bytes reserved for s's return pad: twice as much
// when it reads memory, as SizeOf.
func ReturnSizeOf(s Spec) int {
	if reads(s) {
		return 2 * MaxReturnSize
	}
	return MaxReturnSize
}

// DefaultDepth is the entries of a thread's shadow stack.
const DefaultDepth = 4096

// ShadowSize is the bytes of a shadow area of depth entries a thread.
func ShadowSize(depth int) int { return ShadowHeader + ShadowThreads*slotSize(depth) }

func slotSize(depth int) int { return slotHeader + depth*ShadowEntry }

// Hijack is what an entry pad needs to hijack its return.
type Hijack struct {
	Shadow uint64 // the shadow area in the process
	Depth  int    // entries a thread
	Return uint64 // the site's return pad
	Ring   uint64 // the ring (OffRetMissed)
	// Args are the arguments (1-based) the entry keeps on the shadow
	// stack for its return probe (an output argument, read at the
	// return: bytecode's EntryArgs), at most MaxShadowArgs.
	Args []int
}

// ArgsOf lists the entry's arguments programs read at the return
// (Hijack.Args).
func ArgsOf(progs ...*bytecode.Program) []int {
	var m uint8
	for _, p := range progs {
		if p != nil {
			m |= p.EntryArgs()
		}
	}
	var args []int
	for n := 1; m != 0; n, m = n+1, m>>1 {
		if m&1 != 0 {
			args = append(args, n)
		}
	}
	return args
}

// etscSlot is a return pad's top frame word (topSlot) for the entry's tsc.
func etscSlot(frame int32) x86.Mem { return topSlot(frame, 1) }

// emitFind leaves in rdi the thread slot of fs base rdx (claiming a free
// one when claim), or jumps to none. Clobbers rax, rcx, r8, r9.
func emitFind(a *x86.Asm, h *Hijack, claim bool, none x86.Label) {
	loop, next, found := a.NewLabel(), a.NewLabel(), a.NewLabel()
	a.MovRR(x86.RAX, x86.RDX)
	a.MovRI(x86.RCX, hashMul)
	a.RR(x86.IMUL, x86.RAX, x86.RCX)
	a.RI(x86.SHR, x86.RAX, 64-shadowBits)
	a.MovRI(x86.R9, shadowProbes)
	a.Bind(loop)
	a.MovRR(x86.RDI, x86.RAX)
	a.RI(x86.IMUL, x86.RDI, int32(slotSize(h.Depth)))
	a.MovRI(x86.R8, h.Shadow+ShadowHeader)
	a.RR(x86.ADD, x86.RDI, x86.R8)
	a.Load(x86.R8, x86.Mem{Base: x86.RDI})
	a.RR(x86.CMP, x86.R8, x86.RDX)
	a.Jcc(x86.E, found)
	a.RR(x86.TEST, x86.R8, x86.R8)
	if !claim {
		a.Jcc(x86.E, none)
		a.Jmp(next)
	} else {
		a.Jcc(x86.NE, next)
		a.MovRR(x86.RCX, x86.RAX)
		a.MovRI(x86.RAX, 0)
		a.LockCmpxchg(x86.Mem{Base: x86.RDI}, x86.RDX)
		a.Jcc(x86.E, found)
		a.RR(x86.CMP, x86.RAX, x86.RDX)
		a.Jcc(x86.E, found)
		a.MovRR(x86.RAX, x86.RCX)
	}
	a.Bind(next)
	a.RI(x86.ADD, x86.RAX, 1)
	a.RI(x86.AND, x86.RAX, ShadowThreads-1)
	a.RI(x86.SUB, x86.R9, 1)
	a.Jcc(x86.NE, loop)
	a.Jmp(none)
	a.Bind(found)
}

// emitHijack is an entry pad's push, after its record: rbx is the frame,
// every register but rbx and rsp free. The entry is reserved (count
// stored) before it is written, and the return address is swapped after
// it, by the trampoline's call (Build), so a signal handler's calls in
// between nest above it. A stack full, or no slot for the thread: on to
// missed (the call's return is not seen, counted there). An Open
// pad's entry keeps its record's tsc (one clock read, and the return
// pad knows its entry's record by it: emitAmend).
func emitHijack(a *x86.Asm, h *Hijack, s Spec, frame int32, missed x86.Label) {
	a.Rdfsbase(x86.RDX)
	a.RR(x86.TEST, x86.RDX, x86.RDX)
	a.Jcc(x86.E, missed)
	emitFind(a, h, true, missed)
	a.Load(x86.RCX, x86.Mem{Base: x86.RDI, Disp: 8})
	a.RI(x86.CMP, x86.RCX, int32(h.Depth))
	a.Jcc(x86.AE, missed)
	a.Lea(x86.RAX, x86.Mem{Base: x86.RCX, Disp: 1})
	a.Store(x86.Mem{Base: x86.RDI, Disp: 8}, x86.RAX)
	a.RI(x86.SHL, x86.RCX, shadowShift)
	a.RR(x86.ADD, x86.RCX, x86.RDI)
	for k, n := range h.Args {
		r, _ := bytecode.ArgSlot(s.ABI, n) // Check refused any other
		a.Load(x86.RAX, slot(x86.Reg(r)))
		a.Store(x86.Mem{Base: x86.RCX, Disp: slotHeader + entArgs + 8*int32(k)}, x86.RAX)
	}
	a.Load(x86.R10, slot(x86.RSP)) // the thread's rsp: its return address
	a.Load(x86.R11, x86.Mem{Base: x86.R10})
	a.Store(x86.Mem{Base: x86.RCX, Disp: slotHeader + entSP}, x86.R10)
	a.Store(x86.Mem{Base: x86.RCX, Disp: slotHeader + entOrig}, x86.R11)
	if s.Open {
		read := a.NewLabel()
		a.Load(x86.RAX, tscSlot(frame))
		a.RR(x86.TEST, x86.RAX, x86.RAX)
		a.Jcc(x86.NE, read)
		tsc(a, x86.RAX)
		a.Bind(read)
	} else {
		tsc(a, x86.RAX)
	}
	a.Store(x86.Mem{Base: x86.RCX, Disp: slotHeader + entTSC}, x86.RAX)
	a.MovRI(x86.RAX, h.Return)
	a.Store(x86.Mem{Base: x86.RCX, Disp: slotHeader + entRet}, x86.RAX)
}

// BuildReturn returns the return pad of s (its return probe: condition
// and fetches read the registers at the return, and the entry's
// arguments h keeps) assembled to run at `at`, and its exception table;
// h is its entry's. Its record holds the fetched values (strings in the
// string area, read as an entry pad reads them), then rax, then the
// entry's tsc. A return whose entry is not on the thread's shadow stack
// has nowhere to go: ud2, as the kernel kills a task whose uretprobe
// lost its return address. In a counting trace (s.Count) it adds to the
// site's tally block instead of writing a record.
func BuildReturn(s Spec, h *Hijack) ([]byte, []Fixup, error) {
	if len(s.Fetches)+2 > MaxValues {
		return nil, nil, fmt.Errorf("pad: a return probe with %d values (a record holds %d with the return value and time)", len(s.Fetches), MaxValues-2)
	}
	if s.Amend && (len(s.Fetches) > 1 || s.Cond != nil || s.Count || s.Sync || reads(s)) {
		return nil, nil, fmt.Errorf("pad: a return pad amending its entry's record has no condition, one value at most, no read, and does not count or wait")
	}
	s.Kind = KindReturn
	if err := Check(s); err != nil {
		return nil, nil, err
	}
	if err := h.check(s); err != nil {
		return nil, nil, err
	}
	frame, err := frameSize(s)
	if err != nil {
		return nil, nil, err
	}
	a := x86.NewAsm()
	down := redZone + frame
	regs := returnRegs(s)
	saveRegs(a, down, regs)
	emitReadSetup(a, s)
	lost, scan, match, done := a.NewLabel(), a.NewLabel(), a.NewLabel(), a.NewLabel()
	a.Load(x86.R10, slot(x86.RSP))
	a.Lea(x86.R10, x86.Mem{Base: x86.R10, Disp: -8}) // the slot ret popped
	a.Rdfsbase(x86.RDX)
	emitFind(a, h, false, lost)
	a.Load(x86.RCX, x86.Mem{Base: x86.RDI, Disp: 8})
	a.Bind(scan)
	a.RR(x86.TEST, x86.RCX, x86.RCX)
	a.Jcc(x86.E, lost)
	a.RI(x86.SUB, x86.RCX, 1)
	a.MovRR(x86.RAX, x86.RCX)
	a.RI(x86.SHL, x86.RAX, shadowShift)
	a.RR(x86.ADD, x86.RAX, x86.RDI)
	a.Load(x86.R8, x86.Mem{Base: x86.RAX, Disp: slotHeader + entSP})
	a.RR(x86.CMP, x86.R8, x86.R10)
	a.Jcc(x86.NE, scan)
	a.Bind(match)
	for k, n := range h.Args {
		a.Load(x86.R9, x86.Mem{Base: x86.RAX, Disp: slotHeader + entArgs + 8*int32(k)})
		a.Store(x86.Mem{Base: x86.RBX, Disp: 8 * int32(bytecode.NativeEntrySlot+n-1)}, x86.R9)
	}
	a.Load(x86.R8, x86.Mem{Base: x86.RAX, Disp: slotHeader + entOrig})
	a.Load(x86.R9, x86.Mem{Base: x86.RAX, Disp: slotHeader + entTSC})
	a.Store(etscSlot(frame), x86.R9)
	// Popped with the entries above it, then the real address back in
	// the slot, where the final ret pops it from: below rsp until then,
	// but inside the red zone no signal frame is written to.
	a.Store(x86.Mem{Base: x86.RDI, Disp: 8}, x86.RCX)
	a.Store(x86.Mem{Base: x86.R10}, x86.R8)
	if s.Cond != nil {
		if err := s.Cond.Native(a, s.ABI, s.Addr); err != nil {
			return nil, nil, err
		}
		a.RR(x86.TEST, x86.RAX, x86.RAX)
		a.Jcc(x86.E, done)
	}
	var secs []rseqSection
	if s.Count {
		// A counting trace: the call's duration into the site's tally
		// block (tally.go), no record.
		tsc(a, x86.R8)
		a.Load(x86.RAX, etscSlot(frame))
		a.RR(x86.SUB, x86.R8, x86.RAX)
		secs = emitTally(a, s)
		a.Jmp(done)
	}
	if s.Amend {
		if err := emitAmend(a, s, frame, done); err != nil {
			return nil, nil, err
		}
	}
	if err := emitFetches(a, s, frame); err != nil {
		return nil, nil, err
	}
	n := len(s.Fetches)
	a.Load(x86.RAX, slot(x86.RAX))
	a.Store(x86.Mem{Base: x86.RBX, Disp: 8 * int32(slotVals+n)}, x86.RAX)
	a.Load(x86.RAX, etscSlot(frame))
	a.Store(x86.Mem{Base: x86.RBX, Disp: 8 * int32(slotVals+n+1)}, x86.RAX)
	// The record's values: the fetches (their strings read into the
	// record's string area), then the two the pad computed itself (nil).
	rec := s
	rec.Fetches = append(append([]*bytecode.Program(nil), s.Fetches...), nil, nil)
	emitRecord(a, rec, done)
	a.Bind(done)
	restoreRegs(a, down, regs)
	// A ret, not a jmp through the slot: the caller's call pushed this
	// address on the return stack buffer, and the trampoline's call kept
	// it there, so the ret is predicted.
	a.Lea(x86.RSP, x86.Mem{Base: x86.RSP, Disp: -8})
	a.Raw(0xc3) // ret
	a.Bind(lost)
	a.Raw(0x0f, 0x0b) // ud2
	emitRseqExits(a, secs)
	code, err := a.Assemble()
	if err != nil {
		return nil, nil, err
	}
	return rseqDescriptors(code, a, secs, h.Return), fixupsOf(a), nil
}

// check says whether the entry keeps every argument s reads at the
// return, where its ABI passes it.
func (h *Hijack) check(s Spec) error {
	kept := map[int]bool{}
	for _, n := range h.Args {
		if _, ok := bytecode.ArgSlot(s.ABI, n); !ok {
			return fmt.Errorf("%w: entry argument %d is not in a register", bytecode.ErrNotNative, n)
		}
		kept[n] = true
	}
	if len(h.Args) > MaxShadowArgs {
		return fmt.Errorf("%w: a return probe reading %d of the entry's arguments (a shadow stack entry keeps %d)", bytecode.ErrNotNative, len(h.Args), MaxShadowArgs)
	}
	for _, n := range ArgsOf(programs(s)...) {
		if !kept[n] {
			return fmt.Errorf("pad: entry argument %d is not kept for the return", n)
		}
	}
	return nil
}

// emitAmend adds the return to its entry's record, when that is the
// ring's last (index head-1), stamped with the entry's tsc (etscSlot) by
// this thread (its fs base) and still Open (unread): claimed from Open
// by cmpxchg, the return value (the frame's rax) and the tsc go in
// values 2 and 3, the kind becomes KindCall, and the commit is plain.
// A value the return probe fetches (its prototype's typed return value)
// must be rax too: the record keeps one. Otherwise (a record came
// between: a nested call's, another thread's; the reader took it; the
// entry wrote none; a value not rax, a float's) it falls through to the
// return's own record. Clobbers every register but rbx.
func emitAmend(a *x86.Asm, s Spec, frame int32, done x86.Label) error {
	own := a.NewLabel()
	if len(s.Fetches) == 1 {
		if err := s.Fetches[0].Native(a, s.ABI, s.Addr); err != nil {
			return err
		}
		a.Load(x86.RDX, slot(x86.RAX))
		a.RR(x86.CMP, x86.RAX, x86.RDX)
		a.Jcc(x86.NE, own)
	}
	n := int32(s.Records)
	rec := func(off int32) x86.Mem { return x86.Mem{Base: x86.RDI, Disp: HeaderSize + off} }
	a.MovRI(x86.RSI, s.Ring)
	a.Load(x86.RCX, ringMem(OffHead))
	a.RR(x86.TEST, x86.RCX, x86.RCX)
	a.Jcc(x86.E, own)
	a.RI(x86.SUB, x86.RCX, 1) // i
	emitSlot(a, n)
	a.Load(x86.R8, rec(RecTSC))
	a.Load(x86.RDX, etscSlot(frame))
	a.RR(x86.CMP, x86.R8, x86.RDX)
	a.Jcc(x86.NE, own)
	a.Rdfsbase(x86.RDX)
	a.Load(x86.R8, rec(RecFS))
	a.RR(x86.CMP, x86.R8, x86.RDX)
	a.Jcc(x86.NE, own)
	// Open (i &^ (n-1)) + 1 → claimed (i &^ (n-1)) | Busy.
	a.MovRI(x86.RDX, Busy)
	a.MovRR(x86.R8, x86.RAX)
	a.RR(x86.OR, x86.R8, x86.RDX)
	a.Lea(x86.RAX, x86.Mem{Base: x86.RAX, Disp: 1})
	a.MovRI(x86.RDX, Open)
	a.RR(x86.OR, x86.RAX, x86.RDX)
	a.LockCmpxchg(rec(RecSeq), x86.R8)
	a.Jcc(x86.NE, own)
	a.Load(x86.RAX, slot(x86.RAX))
	a.Store(rec(RecVals+8*MaxOpenValues), x86.RAX)
	tsc(a, x86.RAX)
	a.Store(rec(RecVals+8*(MaxOpenValues+1)), x86.RAX)
	a.Load(x86.RAX, rec(RecSite))
	a.MovRI(x86.RDX, 1<<56-1)
	a.RR(x86.AND, x86.RAX, x86.RDX)
	a.MovRI(x86.RDX, uint64(KindCall)<<56)
	a.RR(x86.OR, x86.RAX, x86.RDX)
	a.Store(rec(RecSite), x86.RAX)
	// The commit, (i &^ (n-1)) + 1: a plain store, after the others.
	a.MovRI(x86.RDX, ^Busy)
	a.RR(x86.AND, x86.R8, x86.RDX)
	a.Lea(x86.R8, x86.Mem{Base: x86.R8, Disp: 1})
	a.Store(rec(RecSeq), x86.R8)
	a.Jmp(done)
	a.Bind(own)
	return nil
}

// regSet is the registers a pad saves and restores (bit r: x86.Reg r).
type regSet uint16

// allRegs: every register but rsp, whose value the frame keeps anyway.
const allRegs = regSet(0xffff &^ (1 << x86.RSP))

// leanRegs are those a hijack-only entry pad (emitHijack) and a counting
// return pad with no condition (emitFind, the scan, emitTally) use, rbx
// the frame: saving five registers less is 2 ns of a 68 ns timed call
// (docs/benchmarks.md).
const leanRegs = regSet(1<<x86.RAX | 1<<x86.RBX | 1<<x86.RCX | 1<<x86.RDX | 1<<x86.RSI | 1<<x86.RDI |
	1<<x86.R8 | 1<<x86.R9 | 1<<x86.R10 | 1<<x86.R11)

// entryRegs is what s's entry pad saves: lean when it only hijacks, or
// counts too (saving the rest around a vfork child's record); neither
// uses rsi.
func entryRegs(s Spec) regSet {
	if (s.HijackOnly || s.Count && s.Cond == nil) && hijacks(s) && !reads(s) && len(s.Extra) == 0 {
		return leanRegs &^ (1 << x86.RSI)
	}
	return allRegs
}

// saveSet and restoreSet save and restore set's registers in a frame
// saveRegs made.
func saveSet(a *x86.Asm, set regSet) {
	for r := x86.RAX; r <= x86.R15; r++ {
		if set&(1<<r) != 0 {
			a.Store(slot(r), r)
		}
	}
}

func restoreSet(a *x86.Asm, set regSet) {
	for r := x86.RAX; r <= x86.R15; r++ {
		if set&(1<<r) != 0 {
			a.Load(r, slot(r))
		}
	}
}

// returnRegs is what s's return pad saves.
func returnRegs(s Spec) regSet {
	if s.Count && s.Cond == nil && !reads(s) {
		return leanRegs
	}
	return allRegs
}

// saveRegs moves below the red zone and saves the registers of set and
// the flags; rbx is the frame after. raxSaved: rax is the frame's from
// there; saved: all is saved.
func saveRegs(a *x86.Asm, down int32, set regSet) (raxSaved, saved x86.Label) {
	a.Lea(x86.RSP, x86.Mem{Base: x86.RSP, Disp: -down})
	saveSet(a, set)
	raxSaved = a.NewLabel()
	a.Bind(raxSaved)
	a.Lea(x86.RAX, x86.Mem{Base: x86.RSP, Disp: down})
	a.Store(slot(x86.RSP), x86.RAX)
	// The arithmetic flags by seto+lahf, not pushfq: a thread the tracer
	// single-steps here would push the trap flag, and popfq would set it
	// again, a SIGTRAP nobody expects. The pad changes no other flag.
	a.Raw(0x0f, 0x90, 0xc0) // seto %al
	a.Raw(0x9f)             // lahf
	a.Store(x86.Mem{Base: x86.RSP, Disp: 8 * slotFlags}, x86.RAX)
	saved = a.NewLabel()
	a.Bind(saved)
	a.MovRR(x86.RBX, x86.RSP)
	return raxSaved, saved
}

// restoreRegs undoes saveRegs: flags first (the loads after change
// none), rbx last. add $0x7f,%al overflows exactly when seto saved 1;
// sahf sets the others.
func restoreRegs(a *x86.Asm, down int32, set regSet) {
	a.Load(x86.RAX, x86.Mem{Base: x86.RBX, Disp: 8 * slotFlags})
	a.Raw(0x04, 0x7f) // add $0x7f,%al
	a.Raw(0x9e)       // sahf
	restoreSet(a, set&^(1<<x86.RBX))
	a.Load(x86.RBX, slot(x86.RBX))
	a.Lea(x86.RSP, x86.Mem{Base: x86.RSP, Disp: down})
}

// ShadowFrame is one entry of a thread's shadow stack as the tracer
// reads it.
type ShadowFrame struct {
	SP, Orig uint64
}

// ShadowSlot returns the thread slot of fs base fs in the shadow area at
// shadow (read with read) and its entry count; slot 0 if the thread has
// none.
func ShadowSlot(read func(b []byte, addr uint64) error, shadow uint64, depth int, fs uint64) (slotAddr, n uint64, err error) {
	if fs == 0 {
		return 0, 0, nil
	}
	var b [16]byte
	idx := (fs * hashMul) >> (64 - shadowBits)
	for range shadowProbes {
		at := shadow + ShadowHeader + idx*uint64(slotSize(depth))
		if err := read(b[:], at); err != nil {
			return 0, 0, err
		}
		switch key := binary.LittleEndian.Uint64(b[:]); key {
		case 0:
			return 0, 0, nil
		case fs:
			return at, min(binary.LittleEndian.Uint64(b[8:]), uint64(depth)), nil
		}
		idx = (idx + 1) & (ShadowThreads - 1)
	}
	return 0, 0, nil
}

// ReadShadow returns the thread slot of fs base fs in the shadow area at
// shadow (read with read) and its entries, outermost first; slot 0 if
// the thread has none.
func ReadShadow(read func(b []byte, addr uint64) error, shadow uint64, depth int, fs uint64) (slotAddr uint64, frames []ShadowFrame, err error) {
	at, n, err := ShadowSlot(read, shadow, depth, fs)
	if err != nil || at == 0 {
		return 0, nil, err
	}
	buf := make([]byte, n*ShadowEntry)
	if n > 0 {
		if err := read(buf, at+slotHeader); err != nil {
			return 0, nil, err
		}
	}
	for i := range n {
		e := buf[i*ShadowEntry:]
		frames = append(frames, ShadowFrame{SP: binary.LittleEndian.Uint64(e[entSP:]), Orig: binary.LittleEndian.Uint64(e[entOrig:])})
	}
	return at, frames, nil
}

// ShadowCountAt is where a thread slot's entry count is.
func ShadowCountAt(slot uint64) uint64 { return slot + 8 }

// ShadowEntryAt is where entry i of a thread slot is.
func ShadowEntryAt(slot, i uint64) uint64 { return slot + slotHeader + i*ShadowEntry }

// maxRestoreSpan bounds how far above the thread's rsp a shadow entry's
// slot may be for a restore pad to write it: entries beyond belong to
// another stack (a coroutine's, an alternate signal stack).
const maxRestoreSpan = 1 << 26

// emitRestore is an unwinder's restore pad (Spec.Restore): before the
// unwinder reads the thread's return addresses, every slot of its stack
// a return pad hijacked gets its real address back, and its shadow stack
// is emptied (those calls' returns are not seen), as the tracer's
// restoreReturns does at an unwinder's breakpoint; nothing needs the
// tracer. A slot is written only if it still holds its return pad's
// address and lies between rsp and maxRestoreSpan above; the read is a
// fix-up (a slot of a stack gone).
func emitRestore(a *x86.Asm, h *Hijack) {
	done, loop, next := a.NewLabel(), a.NewLabel(), a.NewLabel()
	a.Rdfsbase(x86.RDX)
	a.RR(x86.TEST, x86.RDX, x86.RDX)
	a.Jcc(x86.E, done)
	emitFind(a, h, false, done) // rdi = the thread's slot
	a.Load(x86.RCX, x86.Mem{Base: x86.RDI, Disp: 8})
	a.Load(x86.R10, slot(x86.RSP)) // the thread's rsp
	a.Lea(x86.R11, x86.Mem{Base: x86.R10, Disp: maxRestoreSpan})
	a.Bind(loop)
	a.RR(x86.TEST, x86.RCX, x86.RCX)
	a.Jcc(x86.E, next)
	a.RI(x86.SUB, x86.RCX, 1)
	a.MovRR(x86.RAX, x86.RCX)
	a.RI(x86.SHL, x86.RAX, shadowShift)
	a.RR(x86.ADD, x86.RAX, x86.RDI)
	a.Load(x86.R8, x86.Mem{Base: x86.RAX, Disp: slotHeader + entSP})
	a.RR(x86.CMP, x86.R8, x86.R10)
	a.Jcc(x86.B, loop)
	a.RR(x86.CMP, x86.R8, x86.R11)
	a.Jcc(x86.AE, loop)
	read := a.NewLabel()
	a.Bind(read)
	a.Load(x86.R9, x86.Mem{Base: x86.R8})
	a.Fixups = append(a.Fixups, x86.Fixup{At: read, To: loop})
	a.Load(x86.RSI, x86.Mem{Base: x86.RAX, Disp: slotHeader + entRet})
	a.RR(x86.CMP, x86.R9, x86.RSI)
	a.Jcc(x86.NE, loop)
	a.Load(x86.R9, x86.Mem{Base: x86.RAX, Disp: slotHeader + entOrig})
	a.Store(x86.Mem{Base: x86.R8}, x86.R9)
	a.Jmp(loop)
	a.Bind(next)
	a.StoreI32(x86.Mem{Base: x86.RDI, Disp: 8}, 0)
	a.Bind(done)
}
