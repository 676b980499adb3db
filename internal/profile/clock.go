package profile

import (
	"time"

	"golang.org/x/sys/unix"
)

// monoToUnixNs maps a CLOCK_MONOTONIC time (the events') to Unix time, for
// the profile's start; 0 stays 0 (unknown).
func monoToUnixNs(mono int64) int64 {
	if mono == 0 {
		return 0
	}
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts) != nil {
		return 0
	}
	return mono + time.Now().UnixNano() - ts.Nano()
}
