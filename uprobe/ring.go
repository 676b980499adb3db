//go:build linux && amd64

package uprobe

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/ringbuf"
	"github.com/utap/utap/probe"
)

// pollInterval bounds how long a record waits in the ring: programs only
// wake the reader when a quarter of the ring is unread.
const pollInterval = 10 * time.Millisecond

// ringReader reads the events ring on its own goroutine and decodes each
// record by its kind: a probe's (sites), a system call's (sys) or a
// process event's.
type ringReader struct {
	sites *siteTable
	sys   *sysSession // nil without system call sites
	// execStops hides the stop and continue of a held exec (exec.go).
	execStops bool
	// aggs emits the aggregation maps' changes every AggEvery, from
	// this goroutine: one emits at a time.
	aggs *aggReader
	ring *ringbuf.Reader
	done chan error
	// blocked: the system calls in progress long enough to show their
	// entry (syscall_blocked.go).
	blocked blockedCalls
}

// start opens the ring and delivers its events to emit until stop.
func (r *ringReader) start(events *ebpf.Map, emit func(*probe.Event)) error {
	rd, err := ringbuf.NewReader(events)
	if err != nil {
		return fmt.Errorf("opening the ring buffer: %w", err)
	}
	r.ring = rd
	r.done = make(chan error, 1)
	go func() { r.done <- r.read(emit) }()
	return nil
}

// read delivers events until the reader is flushed or closed.
func (r *ringReader) read(emit func(*probe.Event)) error {
	var rec ringbuf.Record
	var ev probe.Event
	for {
		if err := r.aggs.tick(emit); err != nil {
			return err
		}
		r.ring.SetDeadline(time.Now().Add(pollInterval))
		err := r.ring.ReadInto(&rec)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			// The ring read to its end: a blocked thread's earlier
			// records are all shown before its call's entry.
			r.blocked.scan(r.sys, emit)
			continue
		}
		if errors.Is(err, ringbuf.ErrFlushed) || errors.Is(err, ringbuf.ErrClosed) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading events: %w", err)
		}
		show := true
		switch {
		case isProcRecord(rec.RawSample):
			show, err = decodeProc(rec.RawSample, &ev, r.execStops)
		case r.sys != nil && isStackRecord(rec.RawSample):
			r.sys.stk.sysEntry(rec.RawSample, r.sys.stack)
			show = false
		case r.sys != nil && isSysRecord(rec.RawSample):
			if err = r.sys.decode(rec.RawSample, &ev); err == nil && ev.Sys.Returned {
				r.blocked.sysReturned(ev.TID, ev.TimeNs-ev.DurationNs)
			}
		default:
			err = r.sites.decode(rec.RawSample, &ev)
		}
		if err != nil {
			return fmt.Errorf("decoding an event: %w", err)
		}
		if show {
			emit(&ev)
		}
	}
}

// stop drains what is already in the ring and closes it; nil if never
// started.
func (r *ringReader) stop() error {
	if r.ring == nil {
		return nil
	}
	return errors.Join(r.ring.Flush(), <-r.done, r.ring.Close())
}
