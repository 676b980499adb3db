//go:build linux && amd64

package ptrace

import (
	"time"

	"golang.org/x/sys/unix"
)

// clock reads CLOCK_MONOTONIC (the clock of bpf_ktime_get_ns) without a
// syscall: Go's monotonic reading is that clock, offset once.
type clock struct {
	base int64
	t0   time.Time
}

func newClock() clock {
	var ts unix.Timespec
	t0 := time.Now()
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return clock{base: ts.Nano(), t0: t0}
}

func (c clock) now() int64 { return c.base + int64(time.Since(c.t0)) }
