//go:build linux && amd64

package ptrace

import "testing"

func TestCallsNested(t *testing.T) {
	c := newCallPairs(0)
	// f(1) recursing at 0x1000, 0x0f00, 0x0e00; g(2) inside.
	c.Enter(7, 1, 0x1000, 10)
	c.Enter(7, 1, 0xf00, 20)
	c.Enter(7, 2, 0xe80, 25)
	c.Enter(7, 1, 0xe00, 30)
	c.Enter(8, 1, 0x5000, 31) // another thread
	for _, tc := range []struct {
		site    int
		pos     uint64
		t, want int64
		stack   uint64
		wantOK  bool
	}{
		{1, 0xe00, 35, 5, 7, true},
		{2, 0xe80, 36, 11, 7, true},
		{1, 0xf00, 40, 20, 7, true},
		{1, 0x5000, 41, 10, 8, true},
		{1, 0x1000, 50, 40, 7, true},
		{1, 0x1000, 60, 0, 7, false}, // entry not seen
	} {
		d, ok := c.Return(tc.stack, tc.site, tc.pos, tc.t)
		if d != tc.want || ok != tc.wantOK {
			t.Errorf("Return(%d, %#x) = %d, %v; want %d, %v", tc.site, tc.pos, d, ok, tc.want, tc.wantOK)
		}
	}
	if c.retStats != (retStats{}) {
		t.Errorf("stats %+v", c.retStats)
	}
}

func TestCallsMissedReturns(t *testing.T) {
	c := newCallPairs(0)
	// longjmp out of three nested calls, back to the caller at 0x1000.
	c.Enter(1, 1, 0x1000, 0)
	c.Enter(1, 1, 0xf00, 1)
	c.Enter(1, 1, 0xe00, 2)
	c.Enter(1, 1, 0xd00, 3)
	// Returning from the outer one finds and drops the three inner ones.
	if d, ok := c.Return(1, 1, 0x1000, 10); !ok || d != 10 || c.Dropped != 3 {
		t.Errorf("Return = %d, %v, stats %+v", d, ok, c.retStats)
	}
	// A panic (or tail call out) leaves a call open at 0x900; the next call
	// from the same place reuses its slot and replaces it.
	c.Enter(1, 1, 0x900, 20)
	c.Enter(1, 1, 0x900, 30)
	if d, ok := c.Return(1, 1, 0x900, 35); !ok || d != 5 || c.Dropped != 4 {
		t.Errorf("Return = %d, %v, stats %+v", d, ok, c.retStats)
	}
	c.Enter(1, 1, 0x800, 40)
	c.Forget(1)
	if c.Dropped != 5 || len(c.stacks) != 0 {
		t.Errorf("after Forget: stats %+v, %d stacks", c.retStats, len(c.stacks))
	}
}

func TestCallsLimit(t *testing.T) {
	c := newCallPairs(100)
	for i := range 150 {
		c.Enter(1, 1, 0x100000-uint64(i)*16, int64(i))
	}
	got := 0
	for i := 149; i >= 0; i-- {
		if _, ok := c.Return(1, 1, 0x100000-uint64(i)*16, 1000); ok {
			got++
		}
	}
	if got != 100 || c.Missed != 50 || c.Dropped != 0 {
		t.Errorf("%d paired, stats %+v", got, c.retStats)
	}
}

func TestGoPos(t *testing.T) {
	// The same frame on a stack before and after the runtime copies it.
	old, moved := goPos(0xc000100000, 0xc0000fff00), goPos(0xc000400000, 0xc0003fff00)
	deeper := goPos(0xc000400000, 0xc0003ffe00)
	if old != moved || !(deeper < moved) {
		t.Errorf("goPos: %#x %#x %#x", old, moved, deeper)
	}
}
