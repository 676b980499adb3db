package pad

import (
	"encoding/binary"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/utap/utap/internal/x86"
)

// Per-CPU tallies by restartable sequences. A counting trace's timed
// pads make their adds (the entry's count; the return's duration sum and
// bucket) plain adds to the CPU's copy of the site's block, each the
// commit of an rseq critical section (the kernel's rseq(2), which glibc
// registers for every thread since 2.35): the kernel moves a thread
// preempted, migrated or signalled inside one to its abort handler, so no
// two threads add to one CPU's copy at once and no add is lost, without
// a locked instruction (a locked add here is 5.9 ns, a plain one 1.8).
// The abort handler, and anything that is not plain (no rseq offset
// published, the thread's TLS not glibc's, a CPU past TallyCPUs, a vfork
// child running on its parent's TLS: Ring.Divert takes the offset back
// meanwhile), takes the locked adds to the shared block instead: a
// thread the tracer single-steps through a section aborts each step and
// goes on there. The section's descriptor is cleared after it, so none
// points into a pad area once the pads are gone (the kernel would kill
// the thread on its next preemption).

// OffRseq, in the ring's header, is the offset of a thread's struct rseq
// from its fs base, as the kernel has it registered (the tracer's
// PTRACE_GET_RSEQ_CONFIGURATION); 0 until the tracer knows it.
const OffRseq = 2048

// RseqSig is the signature glibc registers on x86-64 and the kernel
// checks before a section's abort handler: the tracer publishes OffRseq
// only for a thread registered with it.
const RseqSig = 0x53053053

// struct rseq: cpu_id at 4, rseq_cs at 8; glibc's tcbhead_t: self at 16.
const (
	rseqCPU  = 4
	rseqCS   = 8
	tcbSelf  = 16
	csSize   = 32 // struct rseq_cs, 32-byte aligned
	cpuShift = 21 // log2(TallyCPUSites * TallyBlock)
)

// TallyCPUSites is the sites (ids below it) whose tallies have per-CPU
// copies; the others add to their shared block.
const TallyCPUSites = 1 << (cpuShift - 12)

// maxTallyCPUs bounds the per-CPU copies a ring holds: 2 MiB each,
// touched only as sites are called on that CPU.
const maxTallyCPUs = 64

// TallyCPUs is the CPUs with per-CPU tallies: the possible CPUs, at most
// maxTallyCPUs (a CPU past them takes the shared block).
var TallyCPUs = sync.OnceValue(func() int {
	b, _ := os.ReadFile("/sys/devices/system/cpu/possible")
	return min(max(cpuCount(string(b)), 1), maxTallyCPUs)
})

// cpuCount is the CPU numbers a list of ranges ("0-3,8-11") reaches.
func cpuCount(list string) int {
	n := 0
	for r := range strings.SplitSeq(strings.TrimSpace(list), ",") {
		_, hi, _ := strings.Cut(r, "-")
		if hi == "" {
			hi = r
		}
		if v, err := strconv.Atoi(hi); err == nil {
			n = max(n, v+1)
		}
	}
	return n
}

// TallyCPUOff is the offset of site id's block for CPU 0 (CPU c's is
// c<<cpuShift further) in a ring of n records made with SizeTally.
func TallyCPUOff(n, id int) int { return TallyOff(n, MaxCounted) + id*TallyBlock }

// rseqSection is one add made in a critical section: its descriptor,
// written after the pad's code, holds the labels' addresses; far and
// abort are its ways out, emitted out of line (emitRseqExits).
type rseqSection struct{ lea, start, post, abort, far, out x86.Label }

// cpuAdd is one add to the CPU's copy of a site's block (emitCPUAdds):
// at disp plus index (x86.RSP: nothing); add emits it to the address it
// is given (the section's commit); out is where an abort, or a CPU past
// TallyCPUs, goes on (the locked adds from this one on).
type cpuAdd struct {
	index x86.Reg
	disp  int32
	add   func(x86.Mem)
	out   x86.Label
}

// emitCPUAdds makes adds to the CPU's copy of site s's block, each in a
// critical section of its own, then clears the descriptor and goes on
// to done; with no struct rseq to use (emitRseqBase), to the first add's
// out. Clobbers rax, rcx, rdx, r11; returns the sections, whose exits
// (emitRseqExits) and descriptors (rseqDescriptors) the caller adds
// after the pad's code.
func emitCPUAdds(a *x86.Asm, s Spec, done x86.Label, adds ...cpuAdd) []rseqSection {
	a.MovRI(x86.R11, s.Ring)
	emitRseqBase(a, adds[0].out)
	a.MovRI(x86.R11, s.Ring+uint64(TallyCPUOff(s.Records, int(s.ID))))
	secs := make([]rseqSection, 0, len(adds))
	for _, c := range adds {
		secs = append(secs, emitCPUAdd(a, c))
	}
	a.StoreI32(x86.Mem{Base: x86.RAX, Disp: rseqCS}, 0)
	a.Jmp(done)
	return secs
}

// emitCPUAdd makes add c in a critical section: rax is the thread's
// struct rseq, r11 CPU 0's block. Clobbers rcx.
func emitCPUAdd(a *x86.Asm, c cpuAdd) rseqSection {
	sec := rseqSection{lea: a.NewLabel(), start: a.NewLabel(), post: a.NewLabel(), abort: a.NewLabel(), far: a.NewLabel(), out: c.out}
	a.Bind(sec.lea)
	a.Raw(0x48, 0x8d, 0x0d, 0, 0, 0, 0) // lea descriptor(%rip),%rcx: patched (rseqDescriptors)
	a.Store(x86.Mem{Base: x86.RAX, Disp: rseqCS}, x86.RCX)
	a.Bind(sec.start)
	a.Load32(x86.RCX, x86.Mem{Base: x86.RAX, Disp: rseqCPU})
	a.RI(x86.CMP, x86.RCX, int32(TallyCPUs()))
	a.Jcc(x86.AE, sec.far)
	a.RI(x86.SHL, x86.RCX, cpuShift)
	a.RR(x86.ADD, x86.RCX, x86.R11)
	if c.index != x86.RSP {
		a.RR(x86.ADD, x86.RCX, c.index)
	}
	c.add(x86.Mem{Base: x86.RCX, Disp: c.disp})
	a.Bind(sec.post)
	return sec
}

// emitRseqExits emits secs' ways out, after the pad's straight path.
func emitRseqExits(a *x86.Asm, secs []rseqSection) {
	for _, s := range secs {
		a.Bind(s.far)
		a.StoreI32(x86.Mem{Base: x86.RAX, Disp: rseqCS}, 0)
		a.Jmp(s.out)
		// The signature the kernel checks in the four bytes before the
		// abort handler: ud1 0x53053053(%rip),%edi, never run, as
		// glibc's RSEQ_SIG is laid out for x86.
		a.Raw(0x0f, 0xb9, 0x3d, 0x53, 0x30, 0x05, 0x53)
		a.Bind(s.abort)
		a.Jmp(s.out) // the kernel cleared the descriptor
	}
}

// emitRseqBase leaves in rax the thread's struct rseq, r11 being the
// ring, or jumps to locked: no offset published (OffRseq), or fs not a
// glibc thread block (its self pointer), where the offset means nothing.
// Clobbers rcx, rdx.
func emitRseqBase(a *x86.Asm, locked x86.Label) {
	a.Load(x86.RAX, x86.Mem{Base: x86.R11, Disp: OffRseq})
	a.RR(x86.TEST, x86.RAX, x86.RAX)
	a.Jcc(x86.E, locked)
	a.Rdfsbase(x86.RDX)
	a.Load(x86.RCX, x86.Mem{Base: x86.RDX, Disp: tcbSelf})
	a.RR(x86.CMP, x86.RCX, x86.RDX)
	a.Jcc(x86.NE, locked)
	a.RR(x86.ADD, x86.RAX, x86.RDX)
}

// cpuCounts says whether s's entry counts per CPU: a counting trace's
// entry that hijacks its return (the ring has tally blocks) with a
// per-CPU block (word 0 its count; the block's tally is its return's).
func cpuCounts(s Spec) bool { return s.Count && hijacks(s) && int(s.ID) < TallyCPUSites }

// emitCPUCount adds one to s's entry count on the thread's CPU, or to
// its shared counter by a locked add. Clobbers rax, rcx, rdx, r11.
func emitCPUCount(a *x86.Asm, s Spec) []rseqSection {
	locked, done := a.NewLabel(), a.NewLabel()
	secs := emitCPUAdds(a, s, done, cpuAdd{index: x86.RSP, disp: 0, add: a.IncM, out: locked})
	a.Bind(locked)
	a.MovRI(x86.RCX, s.Ring+uint64(CountOff(s.Records, int(s.ID))))
	a.LockInc(x86.Mem{Base: x86.RCX})
	a.Bind(done)
	return secs
}

// TallyCount is site id's entry count in a counting trace's ring (made
// with SizeTally): its counter and its per-CPU words.
func (r *Ring) TallyCount(id int) uint64 {
	n := r.Count(id)
	for _, at := range r.cpuBlocks(id) {
		n += atomic.LoadUint64(r.word(at))
	}
	return n
}

// cpuBlocks is the offsets of site id's per-CPU blocks in r (none for a
// site past TallyCPUSites, or a ring not made with SizeTally).
func (r *Ring) cpuBlocks(id int) []int {
	if id >= TallyCPUSites {
		return nil
	}
	var offs []int
	for c := range TallyCPUs() {
		if at := TallyCPUOff(int(r.n), id) + c<<cpuShift; at+TallyBlock <= len(r.mem) {
			offs = append(offs, at)
		}
	}
	return offs
}

// rseqDescriptors appends secs' descriptors to code, the pad assembled
// by a to run at `at`, 32-byte aligned, and points each section's lea at
// its own.
func rseqDescriptors(code []byte, a *x86.Asm, secs []rseqSection, at uint64) []byte {
	if len(secs) == 0 {
		return code
	}
	// A copy: the assembler's shape cache keeps the array it returned.
	code = append(make([]byte, 0, len(code)+csSize*(len(secs)+1)), code...)
	for (at+uint64(len(code)))%csSize != 0 {
		code = append(code, 0xcc)
	}
	for _, s := range secs {
		d := len(code)
		lea := a.Offset(s.lea)
		putRel32(code, lea+3, d)
		start := at + uint64(a.Offset(s.start))
		var cs [csSize]byte // version 0, flags 0
		binary.LittleEndian.PutUint64(cs[8:], start)
		binary.LittleEndian.PutUint64(cs[16:], uint64(a.Offset(s.post)-a.Offset(s.start)))
		binary.LittleEndian.PutUint64(cs[24:], at+uint64(a.Offset(s.abort)))
		code = append(code, cs[:]...)
	}
	return code
}

// SetRseq publishes the offset of a thread's struct rseq from its fs
// base (OffRseq): the counting return pads add per CPU from then on.
// Not while diverted (Divert publishes it again after).
func (r *Ring) SetRseq(off uint64) {
	r.rseq.Store(off)
	if atomic.LoadUint64(r.word(OffDivert)) == 0 {
		atomic.StoreUint64(r.word(OffRseq), off)
	}
}

// Rseq is the offset SetRseq published, 0 if none.
func (r *Ring) Rseq() uint64 { return r.rseq.Load() }

// putRel32 points the rel32 at code[field:] (the instruction's last four
// bytes) at target, both offsets in code.
func putRel32(code []byte, field, target int) {
	binary.LittleEndian.PutUint32(code[field:], uint32(int32(target-(field+4))))
}
