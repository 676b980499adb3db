package pad

import (
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/utap/utap/internal/proc"
)

func rdtsc() uint64

// Clock turns the pads' rdtsc readings into CLOCK_MONOTONIC nanoseconds
// (the clock of every other event). The TSC is one invariant counter for
// all CPUs on machines with constant_tsc and nonstop_tsc (Linux's own
// clocksource relies on it); the rate is measured, not read from the CPU,
// and the longer the trace the better its estimate.
type Clock struct {
	tsc0, ns0 uint64
	tsc1, ns1 uint64
	rate      float64 // ns per tick
}

// NewClock starts calibrating: the first pair is taken now, and a short
// wait gives a first rate.
func NewClock() *Clock {
	c := &Clock{}
	c.tsc0, c.ns0 = pair()
	time.Sleep(2 * time.Millisecond)
	c.Update()
	return c
}

// pair reads the TSC and the monotonic clock as close together as it can:
// the tightest of a few tries.
func pair() (tsc, ns uint64) {
	best := ^uint64(0)
	for range 5 {
		var ts unix.Timespec
		a := rdtsc()
		unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
		b := rdtsc()
		if b-a < best {
			best, tsc, ns = b-a, a+(b-a)/2, uint64(ts.Nano())
		}
	}
	return tsc, ns
}

// updateEvery bounds how often Update takes a pair: five clock_gettime
// system calls (x/sys makes them, not the vDSO), which a drainer reading
// a few records a batch would otherwise pay per batch.
const updateEvery = time.Millisecond

// Update takes a new pair, at most once per updateEvery: called at each
// drain, it keeps the rate's baseline growing.
func (c *Clock) Update() {
	if c.rate > 0 && float64(rdtsc()-c.tsc1)*c.rate < float64(updateEvery) {
		return
	}
	c.tsc1, c.ns1 = pair()
	if c.tsc1 > c.tsc0 {
		c.rate = float64(c.ns1-c.ns0) / float64(c.tsc1-c.tsc0)
	}
}

// Rate is the nanoseconds per tick measured so far.
func (c *Clock) Rate() float64 { return c.rate }

// TSC converts CLOCK_MONOTONIC nanoseconds to a TSC reading.
func (c *Clock) TSC(ns int64) uint64 {
	return c.tsc1 + uint64(int64(float64(ns-int64(c.ns1))/c.rate))
}

// Nanos converts a TSC reading to CLOCK_MONOTONIC nanoseconds.
func (c *Clock) Nanos(tsc uint64) int64 {
	return int64(c.ns1) + int64(float64(int64(tsc-c.tsc1))*c.rate)
}

// FSGSBase says whether programs here may run rdfsbase, the pads' way to
// name their thread: the kernel sets AT_HWCAP2's bit 1 when it enabled
// the instruction (Linux 5.9+, on CPUs with FSGSBASE).
func FSGSBase() bool {
	v, err := proc.Auxv(os.Getpid(), atHWCAP2)
	return err == nil && v&2 != 0
}

const atHWCAP2 = 26
