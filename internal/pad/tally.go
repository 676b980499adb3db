package pad

import (
	"math/bits"
	"sync/atomic"

	"github.com/utap/utap/internal/x86"
)

// Timed counts in-process (utap -c with returns). In a counting trace a
// return pad writes no record: it adds to its site's tally block, after
// the ring's strings, so counts and durations are exact at any rate and a
// call costs a few locked adds. A block:
//
//	0   unused: the calls are the buckets' sum (an add less a call); in
//	    a per-CPU copy, the entry's count (emitCPUCount)
//	8   errors: returns with a negative signed value
//	16  sum of the durations (TSC ticks)
//	24  ^minimum duration: inverted so that 0 is unset and both bounds
//	    keep the larger with one cmpxchg loop
//	32  maximum duration
//	64  TallyBuckets counts by TallyBucket(duration)
//
// Ticks, not nanoseconds: the tracer knows the TSC's rate only as it
// measures it, and converts when it reads the block.
const (
	TallyBlock   = 4096
	TallyBuckets = 496
	tallyErrors  = 8
	tallySum     = 16
	tallyNotMin  = 24
	tallyMax     = 32
	tallyHist    = 64
	tallySubBits = 3 // 8 buckets per power of two: 12.5% wide
)

// TallyOff is the offset of site id's tally block in a ring of n records
// made for a counting trace (SizeTally).
func TallyOff(n, id int) int { return Size(n) + id*TallyBlock }

// SizeTally is the bytes of a ring of n records with a tally block for
// each of MaxCounted sites, and a copy of the first TallyCPUSites' for
// each of TallyCPUs (rseq.go); pages are touched only by the sites called.
func SizeTally(n int) int { return TallyCPUOff(n, 0) + TallyCPUs()<<cpuShift }

// TallyBucket is v's bucket: v itself below 8, then 8 per power of two.
func TallyBucket(v uint64) int {
	if v < 1<<tallySubBits {
		return int(v)
	}
	e := bits.Len64(v) - 1
	return (e-tallySubBits)<<tallySubBits + int(v>>(e-tallySubBits))
}

// TallyBounds is the lowest value of bucket i and its width.
func TallyBounds(i int) (low, width uint64) {
	if i < 1<<tallySubBits {
		return uint64(i), 1
	}
	shift := i>>tallySubBits - 1
	return uint64(i&(1<<tallySubBits-1)+1<<tallySubBits) << shift, 1 << shift
}

// emitTally adds the call that returns to site s's block: r8 holds its
// duration, rbx the frame (rax saved in it). The sum and the bucket go to
// the CPU's copy of the block when they can (rseq.go), else to the shared
// one by locked adds; errors and bounds, rarely written, are shared.
// Clobbers rax, rcx, rdx, rsi, rdi, r9, r11; returns the critical
// sections, whose exits (emitRseqExits) and descriptors
// (rseqDescriptors) the caller adds after the pad's code.
func emitTally(a *x86.Asm, s Spec) []rseqSection {
	a.MovRI(x86.RSI, s.Ring+uint64(TallyOff(s.Records, int(s.ID))))
	ok := a.NewLabel()
	a.Load(x86.RAX, x86.Mem{Base: x86.RBX, Disp: 8 * int32(x86.RAX)})
	a.RR(x86.TEST, x86.RAX, x86.RAX)
	a.Jcc(x86.GE, ok)
	a.LockInc(x86.Mem{Base: x86.RSI, Disp: tallyErrors})
	a.Bind(ok)
	a.MovRR(x86.R9, x86.R8)
	a.Not(x86.R9)
	keepLarger(a, x86.Mem{Base: x86.RSI, Disp: tallyNotMin}, x86.R9)
	keepLarger(a, x86.Mem{Base: x86.RSI, Disp: tallyMax}, x86.R8)
	small := a.NewLabel()
	a.MovRR(x86.RDI, x86.R8)
	a.RI(x86.CMP, x86.R8, 1<<tallySubBits)
	a.Jcc(x86.B, small)
	a.Bsr(x86.RCX, x86.R8)
	a.RI(x86.SUB, x86.RCX, tallySubBits)
	a.RR(x86.SHR, x86.RDI, x86.RCX)
	a.RI(x86.SHL, x86.RCX, tallySubBits)
	a.RR(x86.ADD, x86.RDI, x86.RCX)
	a.Bind(small)
	a.RI(x86.SHL, x86.RDI, 3) // the bucket's offset
	locked, lockedHist, done := a.NewLabel(), a.NewLabel(), a.NewLabel()
	var secs []rseqSection
	if int(s.ID) < TallyCPUSites {
		secs = emitCPUAdds(a, s, done,
			cpuAdd{index: x86.RSP, disp: tallySum, add: func(m x86.Mem) { a.AddM(m, x86.R8) }, out: locked},
			cpuAdd{index: x86.RDI, disp: tallyHist, add: a.IncM, out: lockedHist})
	}
	a.Bind(locked)
	a.MovRR(x86.R9, x86.R8)
	a.LockXadd(x86.Mem{Base: x86.RSI, Disp: tallySum}, x86.R9)
	a.Bind(lockedHist)
	a.RR(x86.ADD, x86.RDI, x86.RSI)
	a.LockInc(x86.Mem{Base: x86.RDI, Disp: tallyHist})
	a.Bind(done)
	return secs
}

// keepLarger stores v at m unless m holds as much (unsigned): a cmpxchg
// loop. Clobbers rax.
func keepLarger(a *x86.Asm, m x86.Mem, v x86.Reg) {
	loop, done := a.NewLabel(), a.NewLabel()
	a.Load(x86.RAX, m)
	a.Bind(loop)
	a.RR(x86.CMP, v, x86.RAX)
	a.Jcc(x86.BE, done)
	a.LockCmpxchg(m, v)
	a.Jcc(x86.NE, loop)
	a.Bind(done)
}

// Tally is one site's block as the tracer reads it.
type Tally struct {
	Hits, Errors uint64 // Hits: the buckets' sum
	Sum          uint64 // ticks
	Min, Max     uint64 // ticks; meaningful when Hits > 0
	Buckets      [TallyBuckets]uint64
}

// Tally reads site id's block (a ring made with SizeTally).
func (r *Ring) Tally(id int) Tally {
	off := TallyOff(int(r.n), id)
	var t Tally
	if off+TallyBlock > len(r.mem) {
		return t // not a counting trace's ring
	}
	for _, b := range append([]int{off}, r.cpuBlocks(id)...) {
		for i := range t.Buckets {
			n := atomic.LoadUint64(r.word(b + tallyHist + 8*i))
			t.Buckets[i] += n
			t.Hits += n
		}
		t.Sum += atomic.LoadUint64(r.word(b + tallySum))
	}
	if t.Hits == 0 {
		return t
	}
	t.Errors = atomic.LoadUint64(r.word(off + tallyErrors))
	t.Min = ^atomic.LoadUint64(r.word(off + tallyNotMin))
	t.Max = atomic.LoadUint64(r.word(off + tallyMax))
	return t
}
