package pad

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The converted TSC agrees with CLOCK_MONOTONIC read next to it.
func TestClock(t *testing.T) {
	c := NewClock()
	time.Sleep(20 * time.Millisecond)
	c.Update()
	for range 3 {
		time.Sleep(5 * time.Millisecond)
		var ts unix.Timespec
		unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
		got := c.Nanos(rdtsc())
		if d := got - ts.Nano(); d < -200_000 || d > 200_000 {
			t.Fatalf("tsc says %d, the clock %d: %d ns apart", got, ts.Nano(), d)
		}
	}
}
