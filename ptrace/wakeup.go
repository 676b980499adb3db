//go:build linux && amd64

package ptrace

import (
	"encoding/binary"
	"os"
	"sync/atomic"
	"time"
)

// Every ptrace stop wakes a CPU twice: the tracer's when the tracee traps,
// the tracee's when the tracer resumes it. A CPU that went idle has halted,
// and waking it is what a stop costs most (on a VM, an IPI, a VM exit and
// an entry): on this project's 2-vCPU VM a stop costs 34–42 µs with idle
// CPUs halting and 15–16 µs with them polling. A PM QoS CPU latency
// request of 0 (/dev/cpu_dma_latency, the knob of tuned's latency profiles
// and cyclictest) makes idle CPUs poll instead of halting.
//
// Polling burns the idle time of every CPU, so the request is held only
// while stops come fast (at least fastStops per fastWindow) and dropped in
// the next window without them; closing the file drops it too, so it
// never outlives utap. Without the right to open the file (root), stops
// simply cost more.

const (
	fastWindow = 100 * time.Millisecond
	fastStops  = 100 // 1,000 stops a second
)

// wakeups holds the latency request while the loop reports stops fast.
type wakeups struct {
	stops   atomic.Int64 // counted by the loop
	done    chan struct{}
	dropped chan struct{} // closed once the request is gone
}

// startWakeups watches the stop rate until stop is called; nil when the
// request cannot be made. engaged is called the first time it is held.
func startWakeups(engaged func()) *wakeups {
	f, err := os.OpenFile("/dev/cpu_dma_latency", os.O_WRONLY, 0)
	if err != nil {
		return nil
	}
	w := &wakeups{done: make(chan struct{}), dropped: make(chan struct{})}
	go func() {
		defer close(w.dropped)
		defer f.Close()
		set := func(us int32) {
			var b [4]byte
			binary.LittleEndian.PutUint32(b[:], uint32(us))
			f.Write(b[:])
		}
		tick := time.NewTicker(fastWindow)
		defer tick.Stop()
		var last int64
		on := false
		for {
			select {
			case <-w.done:
				return
			case <-tick.C:
			}
			n := w.stops.Load()
			fast := n-last >= fastStops
			last = n
			if fast != on {
				on = fast
				if on {
					set(0)
					if engaged != nil {
						engaged()
						engaged = nil
					}
				} else {
					set(noLatencyLimit)
				}
			}
		}
	}()
	return w
}

// noLatencyLimit is a request that constrains nothing (2000 s, the
// value a request is opened with).
const noLatencyLimit = 2_000_000_000

// stopped counts one stop.
func (w *wakeups) stopped() {
	if w != nil {
		w.stops.Add(1)
	}
}

// stop drops the request and returns once it is gone.
func (w *wakeups) stop() {
	if w != nil {
		close(w.done)
		<-w.dropped
	}
}
