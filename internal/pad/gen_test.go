//go:build linux && amd64

package pad

import (
	"math/rand"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/utap/utap/internal/bytecode"
	"github.com/utap/utap/internal/jit"
	"github.com/utap/utap/probe"
)

// arithFlags are the flags a pad must keep (OF SF ZF AF PF CF); it never
// touches the others.
const arithFlags = 0x8d5

// compileSpec parses a probe spec and compiles its condition (nil if it
// has none) and fetches, as the engine does.
func compileSpec(t *testing.T, text string) (*probe.Spec, *bytecode.Program, []*bytecode.Program) {
	t.Helper()
	s, err := probe.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	var cond *bytecode.Program
	if s.Cond != nil {
		if cond, err = bytecode.CompileCond(s.Cond); err != nil {
			t.Fatal(err)
		}
	}
	var fetches []*bytecode.Program
	for _, f := range s.Fetches {
		p, err := bytecode.CompileFetch(f)
		if err != nil {
			t.Fatal(err)
		}
		fetches = append(fetches, p)
	}
	return s, cond, fetches
}

// padUnderTest builds the pad of `work(arg1, arg2 + 1) if arg1 > 5` (or
// its counting form) on a ring of n records in a shared mapping of this
// process, its displaced instructions a ret, so that jit can call it.
func padUnderTest(t *testing.T, n int, count bool, opts ...func(*Spec)) (*jit.Func, *Ring, []byte) {
	t.Helper()
	_, cond, fetches := compileSpec(t, "work(arg1, arg2 + 1) if arg1 > 5")
	mem, err := unix.Mmap(-1, 0, Size(n), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Munmap(mem) })
	r, err := NewRing(mem, n)
	if err != nil {
		t.Fatal(err)
	}
	spec := Spec{
		ID: 7, Addr: 0x401000, Cond: cond, Fetches: fetches, Count: count,
		Ring: uint64(uintptr(unsafe.Pointer(&mem[0]))), Records: n,
		Displaced: func(uint64) ([]byte, error) { return []byte{0xc3}, nil },
	}
	for _, o := range opts {
		o(&spec)
	}
	code, lay, err := Build(spec, 0x10000)
	if err != nil {
		t.Fatal(err)
	}
	if lay.Saved <= lay.RaxSaved || lay.Displaced != len(code)-1 || lay.Down < redZone {
		t.Fatalf("layout %+v of %d bytes", lay, len(code))
	}
	return jitFunc(t, code), r, mem
}

// jitFunc makes code a function the test calls, freed at its end.
func jitFunc(t *testing.T, code []byte) *jit.Func {
	t.Helper()
	f, err := jit.New(code)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// call runs the pad with random registers and flags, arg1 = a, and
// checks that it leaves every register and arithmetic flag as it found
// them.
func call(t *testing.T, f *jit.Func, rnd *rand.Rand, a, b uint64) {
	t.Helper()
	var regs jit.Regs
	for i := range regs.In {
		regs.In[i] = rnd.Uint64()
	}
	regs.In[7], regs.In[6] = a, b // rdi, rsi
	regs.InFlags = 0x202 | uint64(rnd.Intn(1<<12))&arithFlags
	f.CallRegs(&regs)
	if regs.Out != regs.In {
		t.Fatalf("registers changed:\n in  %x\n out %x", regs.In, regs.Out)
	}
	if regs.OutFlags&arithFlags != regs.InFlags&arithFlags {
		t.Fatalf("flags %#x, were %#x", regs.OutFlags, regs.InFlags)
	}
}

// The pad keeps every register and flag, writes one record per call its
// condition holds for, with the values fetched, and counts what a full
// ring drops.
func TestPadCode(t *testing.T) {
	const n = 16
	f, r, _ := padUnderTest(t, n, false)
	rnd := rand.New(rand.NewSource(1))
	want := 0
	for i := range 40 {
		a := uint64(i % 10)
		call(t, f, rnd, a, uint64(i))
		if a > 5 {
			want++
		}
	}
	if r.Reserved() != uint64(want) || r.Drops() != uint64(want-n) {
		t.Fatalf("reserved %d, dropped %d; want %d, %d", r.Reserved(), r.Drops(), want, want-n)
	}
	var recs []Record
	r.Drain(func(rec *Record) { recs = append(recs, *rec) })
	if len(recs) != n {
		t.Fatalf("%d records, want %d", len(recs), n)
	}
	var lastTSC uint64
	for k, rec := range recs {
		i := []int{6, 7, 8, 9, 16, 17, 18, 19, 26, 27, 28, 29, 36, 37, 38, 39}[k]
		if rec.Site != 7 || rec.Kind != 0 || rec.Vals[0] != uint64(i%10) || rec.Vals[1] != uint64(i)+1 ||
			rec.FS == 0 || rec.TSC <= lastTSC {
			t.Fatalf("record %d: %+v, want call %d", k, rec, i)
		}
		lastTSC = rec.TSC
	}
	// Drained, the ring takes records again.
	call(t, f, rnd, 9, 1)
	if got := r.Drain(func(*Record) {}); got != 1 {
		t.Fatalf("%d records after the drain, want 1", got)
	}
}

// A counting pad adds to its site's counter, once per call its condition
// holds for, and writes no record.
func TestPadCodeCount(t *testing.T) {
	f, r, _ := padUnderTest(t, 16, true)
	rnd := rand.New(rand.NewSource(2))
	for i := range 1000 {
		call(t, f, rnd, uint64(i%10), 0)
	}
	if r.Count(7) != 400 || r.Reserved() != 0 {
		t.Fatalf("counted %d, reserved %d; want 400, 0", r.Count(7), r.Reserved())
	}
}

// While the ring's divert word is set, a counting pad writes a record
// (its fs base, its index) instead of counting, and counts again once it
// is cleared.
func TestPadCodeCountDiverted(t *testing.T) {
	f, r, _ := padUnderTest(t, 16, true)
	rnd := rand.New(rand.NewSource(3))
	call(t, f, rnd, 9, 0)
	r.Divert(1)
	call(t, f, rnd, 9, 0)
	call(t, f, rnd, 1, 0) // its condition is false: nothing
	call(t, f, rnd, 8, 0)
	r.Divert(-1)
	call(t, f, rnd, 7, 0)
	var recs []Record
	r.Drain(func(rec *Record) { recs = append(recs, *rec) })
	if r.Count(7) != 2 || len(recs) != 2 {
		t.Fatalf("counted %d, %d records; want 2, 2", r.Count(7), len(recs))
	}
	for i, rec := range recs {
		if rec.Index != uint64(i) || rec.Site != 7 || rec.FS == 0 {
			t.Fatalf("record %d: %+v", i, rec)
		}
	}
}
