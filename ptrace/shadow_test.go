//go:build linux && amd64

package ptrace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"testing"
)

const tramp = 0x7f0000001000

// stackMem is a thread's memory: sparse 8-byte words, as the engine's
// /proc/PID/mem accessor would see them.
type stackMem map[uint64]uint64

func (m stackMem) ReadAt(p []byte, addr uint64) error {
	if len(p) != 8 || addr%8 != 0 {
		return fmt.Errorf("unaligned read %#x", addr)
	}
	binary.LittleEndian.PutUint64(p, m[addr])
	return nil
}

func (m stackMem) WriteAt(p []byte, addr uint64) error {
	if len(p) != 8 || addr%8 != 0 {
		return fmt.Errorf("unaligned write %#x", addr)
	}
	m[addr] = binary.LittleEndian.Uint64(p)
	return nil
}

// cpu runs call/ret/jmp on a stack the way the hardware does, with the
// engine's return-probe handling at entry and at the trampoline.
type cpu struct {
	t     *testing.T
	mem   stackMem
	rsp   uint64
	ss    *shadowStack
	now   int64
	rets  []int // sites whose returns were reported, in order
	durs  []int64
	probe map[int]bool // sites with a return probe
}

func newCPU(t *testing.T, limit int) *cpu {
	return &cpu{t: t, mem: stackMem{}, rsp: 0x7ffd0000, ss: newShadowStack(tramp, limit), probe: map[int]bool{}}
}

// enter is the probe at a function's first instruction.
func (c *cpu) enter(site int) {
	c.now++
	if !c.probe[site] {
		return
	}
	_, err := c.ss.Push(c.mem, retFrame{SP: c.rsp, Site: site, EntryTime: c.now})
	if err != nil && !errors.Is(err, errTooDeep) {
		c.t.Fatalf("push site %d: %v", site, err)
	}
}

// call pushes the return address ra and enters site.
func (c *cpu) call(site int, ra uint64) {
	c.rsp -= 8
	c.mem[c.rsp] = ra
	c.enter(site)
}

// ret returns from the current function (popping extra bytes, as ret imm16)
// and reports where execution continues.
func (c *cpu) ret(extra uint64) uint64 {
	c.now++
	ra := c.mem[c.rsp]
	c.rsp += 8 + extra
	if ra != tramp {
		return ra
	}
	frames, err := c.ss.Pop(c.mem, c.rsp)
	if err != nil {
		c.t.Fatalf("trampoline hit: %v", err)
	}
	for _, f := range frames {
		if f.OrigRet != frames[0].OrigRet {
			c.t.Fatalf("chain with two return addresses: %+v", frames)
		}
		c.rets = append(c.rets, f.Site)
		c.durs = append(c.durs, c.now-f.EntryTime)
	}
	return frames[0].OrigRet
}

func (c *cpu) wantRets(want ...int) {
	c.t.Helper()
	if fmt.Sprint(c.rets) != fmt.Sprint(want) {
		c.t.Errorf("returns reported %v, want %v", c.rets, want)
	}
	c.rets = nil
}

func (c *cpu) wantRet(got, want uint64) {
	c.t.Helper()
	if got != want {
		c.t.Fatalf("returned to %#x, want %#x", got, want)
	}
}

func TestShadowStackNested(t *testing.T) {
	c := newCPU(t, 0)
	c.probe[1], c.probe[2] = true, true
	c.call(1, 0x1000)
	c.call(3, 0x2000) // not probed
	c.call(2, 0x3000)
	if c.ss.Len() != 2 {
		t.Fatalf("depth %d", c.ss.Len())
	}
	c.wantRet(c.ret(0), 0x3000)
	c.wantRet(c.ret(0), 0x2000)
	c.wantRet(c.ret(0), 0x1000)
	c.wantRets(2, 1)
	if c.durs[0] != 1 || c.durs[1] != 5 {
		t.Errorf("durations %v, want [1 5]", c.durs)
	}
	if c.ss.Len() != 0 || c.ss.retStats != (retStats{}) {
		t.Errorf("after: len %d stats %+v", c.ss.Len(), c.ss.retStats)
	}
}

func TestShadowStackRecursion(t *testing.T) {
	const depth = 10000
	for _, limit := range []int{depth, defaultShadowLimit} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			c := newCPU(t, limit)
			c.probe[7] = true
			for i := range depth {
				c.call(7, 0x5000+uint64(i))
			}
			for i := depth - 1; i >= 0; i-- {
				c.wantRet(c.ret(0), 0x5000+uint64(i))
			}
			hijacked := min(depth, limit)
			if len(c.rets) != hijacked || c.ss.Missed != uint64(depth-hijacked) || c.ss.Dropped != 0 {
				t.Errorf("%d returns, stats %+v; want %d returns, %d missed", len(c.rets), c.ss.retStats, hijacked, depth-hijacked)
			}
			// The innermost hijacked call returns first and is the shortest.
			if c.durs[0] >= c.durs[len(c.durs)-1] {
				t.Errorf("durations not nested: first %d last %d", c.durs[0], c.durs[len(c.durs)-1])
			}
		})
	}
}

func TestShadowStackMutualRecursion(t *testing.T) {
	c := newCPU(t, 0)
	c.probe[1], c.probe[2] = true, true
	var want []int
	for i := range 50 {
		c.call(1+i%2, 0x100+uint64(i))
	}
	for i := 49; i >= 0; i-- {
		c.wantRet(c.ret(0), 0x100+uint64(i))
		want = append(want, 1+i%2)
	}
	c.wantRets(want...)
}

func TestShadowStackTailCalls(t *testing.T) {
	c := newCPU(t, 0)
	c.probe[1], c.probe[2], c.probe[3] = true, true, true
	c.call(1, 0x1000)
	c.call(1, 0x1100) // f calls f
	c.enter(2)        // which tail-jumps to g,
	c.enter(4)        // an unprobed function,
	c.enter(3)        // then h
	if c.ss.Len() != 4 {
		t.Fatalf("depth %d, want 4", c.ss.Len())
	}
	c.wantRet(c.ret(0), 0x1100)
	c.wantRets(3, 2, 1)
	c.wantRet(c.ret(0), 0x1000)
	c.wantRets(1)

	// A tail call whose slot is not ours (trampoline value but no frame).
	c.rsp -= 8
	c.mem[c.rsp] = tramp
	chained, err := c.ss.Push(c.mem, retFrame{SP: c.rsp, Site: 1})
	if !chained || !errors.Is(err, errLost) {
		t.Errorf("orphan tail call: chained %v err %v", chained, err)
	}
}

// A hijacked function tail-calls a padded one, whose pad hijacks the
// slot again (the trampoline is its real return address), which
// tail-calls a hijacked one: the first frame lives on under the third,
// at the same slot, and returns after the pad (perl: op_append_elem ->
// newLISTOP -> ck_null).
func TestShadowStackTailCallOverPad(t *testing.T) {
	const pad = 0x7f0000200000
	c := newCPU(t, 0)
	c.ss.padded = func(a uint64) bool { return a == pad }
	c.probe[1], c.probe[3] = true, true
	c.call(1, 0x1000)
	slot := c.rsp
	c.mem[slot] = pad // 2's pad, in-process: the trampoline kept in its own stack
	c.enter(3)
	if c.ss.Len() != 2 {
		t.Fatalf("depth %d, want 2: the first frame dropped", c.ss.Len())
	}
	c.wantRet(c.ret(0), pad)
	c.wantRets(3)
	// The pad returns to the trampoline, its real return address.
	c.rsp -= 8
	c.mem[c.rsp] = tramp
	c.wantRet(c.ret(0), 0x1000)
	c.wantRets(1)
}

func TestShadowStackLongjmp(t *testing.T) {
	c := newCPU(t, 0)
	for i := 1; i <= 4; i++ {
		c.probe[i] = true
	}
	c.call(1, 0x1000)
	c.rsp -= 64 // f's frame
	jmpbuf := c.rsp
	c.call(2, 0x2000)
	c.rsp -= 32
	c.call(3, 0x3000)
	gSlot, hSlot := jmpbuf-8, jmpbuf-8-32-8
	c.rsp = jmpbuf // longjmp from h back into f: g and h never return

	// f calls k: its entry drops g and h, whose slots are put back.
	c.call(4, 0x4000)
	if c.ss.Len() != 2 || c.ss.Dropped != 2 {
		t.Fatalf("after longjmp+call: len %d stats %+v", c.ss.Len(), c.ss.retStats)
	}
	if c.mem[hSlot] != 0x3000 {
		t.Errorf("dead slot of h holds %#x, want it restored", c.mem[hSlot])
	}
	// g's slot is k's now: dropping g must not write over k's return
	// address before k's hijack.
	if c.mem[gSlot] != tramp || c.ss.Frames()[1].OrigRet != 0x4000 {
		t.Errorf("k's slot holds %#x, frame %+v", c.mem[gSlot], c.ss.Frames()[1])
	}
	c.wantRet(c.ret(0), 0x4000)
	c.wantRets(4)
	c.rsp += 64
	c.wantRet(c.ret(0), 0x1000)
	c.wantRets(1)

	// longjmp then return without another call: Pop skips the dead frames.
	c = newCPU(t, 0)
	c.probe[1], c.probe[2], c.probe[3] = true, true, true
	c.call(1, 0x1000)
	c.rsp -= 16
	jmpbuf = c.rsp
	c.call(2, 0x2000)
	c.call(3, 0x3000)
	c.rsp = jmpbuf
	c.rsp += 16
	c.wantRet(c.ret(0), 0x1000)
	c.wantRets(1)
	if c.ss.Len() != 0 || c.ss.Dropped != 2 {
		t.Errorf("len %d stats %+v", c.ss.Len(), c.ss.retStats)
	}
}

func TestShadowStackSignalHandler(t *testing.T) {
	c := newCPU(t, 0)
	c.probe[1], c.probe[2] = true, true
	c.call(1, 0x1000)
	c.rsp -= 40
	interrupted := c.rsp

	// Handler on the same stack, below the red zone and a signal frame.
	c.rsp -= 128 + 0x240
	c.call(2, 0x2000) // the handler's return is sigreturn's trampoline
	c.call(2, 0x2100) // nested
	c.wantRet(c.ret(0), 0x2100)
	c.wantRet(c.ret(0), 0x2000)
	c.rsp = interrupted // sigreturn
	c.rsp += 40
	c.wantRet(c.ret(0), 0x1000)
	c.wantRets(2, 2, 1)

	// A handler on a sigaltstack below the thread's stack nests too.
	c.call(1, 0x1000)
	main := c.rsp
	c.rsp = 0x10000000
	c.call(2, 0x2000)
	c.wantRet(c.ret(0), 0x2000)
	c.rsp = main
	c.wantRet(c.ret(0), 0x1000)
	c.wantRets(2, 1)

	// Above it, the main stack's frames look dead: they are dropped and
	// put back, so the program still returns right; their returns are lost.
	c.call(1, 0x1000)
	main = c.rsp
	c.rsp = 0x7fff00000000
	c.call(2, 0x2000)
	c.wantRet(c.ret(0), 0x2000)
	c.rsp = main
	c.wantRet(c.ret(0), 0x1000)
	c.wantRets(2)
	if c.ss.Dropped != 1 {
		t.Errorf("stats %+v, want 1 dropped", c.ss.retStats)
	}
}

func TestShadowStackRetImm(t *testing.T) {
	c := newCPU(t, 0)
	c.probe[1], c.probe[2] = true, true
	c.call(1, 0x1000)
	c.rsp -= 16 // two stack arguments
	c.call(2, 0x2000)
	c.wantRet(c.ret(16), 0x2000) // ret 16: the callee pops them
	c.wantRet(c.ret(0), 0x1000)
	c.wantRets(2, 1)
}

func TestShadowStackRestore(t *testing.T) {
	c := newCPU(t, 0)
	for i := 1; i <= 3; i++ {
		c.probe[i] = true
	}
	c.call(1, 0x1000)
	c.enter(2) // tail call
	c.rsp -= 200
	c.call(3, 0x3000)
	c.rsp -= 24

	child := c.ss.Clone()
	childMem := stackMem{}
	for k, v := range c.mem {
		childMem[k] = v
	}

	n, err := c.ss.Restore(c.mem, c.rsp)
	if err != nil || n != 2 {
		t.Fatalf("Restore: %d, %v", n, err)
	}
	for addr, v := range c.mem {
		if v == tramp {
			t.Errorf("trampoline left at %#x", addr)
		}
	}
	if c.ss.Len() != 0 {
		t.Errorf("len %d after Restore", c.ss.Len())
	}
	c.rsp += 24
	c.wantRet(c.ret(0), 0x3000)
	c.rsp += 200
	c.wantRet(c.ret(0), 0x1000)
	c.wantRets()

	// The forked child has its own copy and its own memory.
	if child.Len() != 3 {
		t.Fatalf("clone len %d", child.Len())
	}
	if n, err := child.Restore(childMem, c.rsp-224-8); err != nil || n != 2 {
		t.Errorf("child Restore: %d, %v", n, err)
	}

	// A dead slot in the red zone is never written, even holding the
	// trampoline: a leaf function may be using it.
	ss := newShadowStack(tramp, 0)
	mem := stackMem{0x1000: 0x77}
	if _, err := ss.Push(mem, retFrame{SP: 0x1000}); err != nil {
		t.Fatal(err)
	}
	if n, _ := ss.Restore(mem, 0x1000+64); n != 0 || mem[0x1000] != tramp {
		t.Errorf("red zone written: n=%d word %#x", n, mem[0x1000])
	}
}

func TestShadowStackLost(t *testing.T) {
	ss := newShadowStack(tramp, 0)
	if _, err := ss.Pop(stackMem{}, 0x1000); !errors.Is(err, errLost) {
		t.Errorf("Pop on empty stack: %v", err)
	}
}

func BenchmarkShadowStackPushPop(b *testing.B) {
	ss := newShadowStack(tramp, 0)
	mem := stackMem{}
	const depth = 8
	for i := range b.N {
		sp := uint64(0x7ffd0000) - uint64(i%depth)*64
		if i%depth == 0 {
			for ss.Len() > 0 {
				if _, err := ss.Pop(mem, ss.Frames()[ss.Len()-1].SP+8); err != nil {
					b.Fatal(err)
				}
			}
		}
		mem[sp] = 0x1000
		if _, err := ss.Push(mem, retFrame{SP: sp, Site: 1}); err != nil {
			b.Fatal(err)
		}
	}
}
