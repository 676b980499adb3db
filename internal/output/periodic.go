package output

import (
	"sync"
	"time"

	"github.com/utap/utap/probe"
)

// Periodic wraps w so that buffered events reach the file within every,
// even when the traced program goes quiet: a user watching a trace must
// not wait for the next event (or the exit) to see the last one. Writes
// stay buffered, so a busy trace still costs one write(2) per 64 KiB.
// every <= 0 writes each event as it comes, for a terminal: a line must
// show before what the program prints next, as strace's do.
func Periodic(w Writer, every time.Duration) *PeriodicWriter {
	p := &PeriodicWriter{w: w, done: make(chan struct{}), now: every <= 0}
	_, p.pairs = w.(pairWriter)
	if cw, ok := w.(callWriter); ok && cw.takesCalls() {
		p.calls = cw
	}
	if !p.now {
		p.wg.Add(1)
		go p.loop(every)
	}
	return p
}

// PeriodicWriter is the Writer Periodic returns; Close stops its flusher.
type PeriodicWriter struct {
	mu    sync.Mutex
	w     Writer
	dirty bool
	err   error
	done  chan struct{}
	wg    sync.WaitGroup
	now   bool // flush at every event
	// held: now, but the events of a batch are flushed at its end
	// (Hold, Release).
	held bool
	// batch: mu is held for a batch (Hold to Release) by the goroutine
	// whose Calls and Writes come: they take no lock of their own (a
	// locked instruction costs as much as a tenth of a call's line).
	// Only that goroutine writes or reads it.
	batch bool
	pairs bool // w takes a call in one event (pairWriter)
	calls callWriter
}

// pairWriter is a Writer that takes an entry with its Return
// (probe.Event.Return) whole; any other gets the two one by one.
type pairWriter interface{ takesPairs() }

// callWriter is a Writer that takes calls without events (probe.Call),
// when its options let it (takesCalls).
type callWriter interface {
	takesCalls() bool
	callsTimed() bool
	Call(c *probe.Call) (bool, error)
}

func (p *PeriodicWriter) Write(ev *probe.Event) error {
	// No defer: this runs per event.
	p.lock()
	err := p.err
	if err == nil {
		err = p.wrote(p.write(ev))
	}
	p.unlock()
	return err
}

// lock and unlock take mu for a Write or Call, but for one within a
// batch, whose holder has it (Hold).
func (p *PeriodicWriter) lock() {
	if !p.batch {
		p.mu.Lock()
	}
}

func (p *PeriodicWriter) unlock() {
	if !p.batch {
		p.mu.Unlock()
	}
}

// CallsTimed says whether Call's lines show times (Call.TimeNs,
// DurationNs).
func (p *PeriodicWriter) CallsTimed() bool { return p.calls != nil && p.calls.callsTimed() }

// TakesCalls says whether Call may write calls.
func (p *PeriodicWriter) TakesCalls() bool { return p.calls != nil }

// Call writes a call that came without events (probe.Call), as Write
// would its two events; false: not written (TakesCalls false, or the
// writer's line needs the events), nor is any error returned then.
func (p *PeriodicWriter) Call(c *probe.Call) (bool, error) {
	if p.calls == nil {
		return false, nil
	}
	p.lock()
	ok, err := false, p.err
	if err == nil {
		ok, err = p.calls.Call(c)
		if ok || err != nil {
			err = p.wrote(err)
		}
	}
	p.unlock()
	return ok, err
}

// wrote is what follows a write that returned err, under mu: dirty, or
// flushed at once (every <= 0).
func (p *PeriodicWriter) wrote(err error) error {
	switch {
	case err != nil:
		p.dirty = false
	case !p.now || p.held:
		p.dirty = true
	default:
		p.err = p.w.Flush()
		err = p.err
	}
	return err
}

// write hands ev to w, a call's two events one by one unless w takes
// them whole (-C's summary takes the pair after).
func (p *PeriodicWriter) write(ev *probe.Event) error {
	if p.pairs {
		return p.w.Write(ev)
	}
	return probe.Apart(ev, p.w.Write)
}

// Hold locks the writer for a batch (probe.Batcher), and defers the
// flushes of a writer that flushes at every event until Release: a
// batch of lines in one write(2), not one each (a pseudo-terminal's
// write was such a trace's pace).
func (p *PeriodicWriter) Hold() {
	p.mu.Lock()
	p.held, p.batch = p.now, true
}

// Release flushes what Hold deferred, and unlocks.
func (p *PeriodicWriter) Release() {
	defer p.mu.Unlock()
	p.batch = false
	if !p.held {
		return
	}
	p.held = false
	if p.dirty && p.err == nil {
		p.err = p.w.Flush()
	}
	p.dirty = false
}

func (p *PeriodicWriter) Flush() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.w.Flush(); p.err == nil {
		p.err = err
	}
	p.dirty = false
	return p.err
}

// Close stops the flusher and flushes what is left.
func (p *PeriodicWriter) Close() error {
	close(p.done)
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := End(p.w); p.err == nil {
		p.err = err
	}
	return p.err
}

func (p *PeriodicWriter) loop(every time.Duration) {
	defer p.wg.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-p.done:
			return
		case <-t.C:
			p.mu.Lock()
			if p.dirty {
				if err := p.w.Flush(); p.err == nil {
					p.err = err
				}
				p.dirty = false
			}
			p.mu.Unlock()
		}
	}
}
