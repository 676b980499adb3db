package pads

import (
	"sync"
	"time"
)

// napMax bounds the drainer's sleep: nothing needs it (a pad that commits
// a record wakes it), but a wake the drainer never gets would otherwise
// keep records from the terminal for good.
const napMax = 200 * time.Millisecond

// nap is one sleep of the drainer: a goroutine per ring waits on the
// ring's futex (pad.Ring.Sleep); the first to return wakes the drainer.
type nap struct {
	rings []*Ring
	woke  chan struct{}
	wg    sync.WaitGroup
}

// sleep sleeps until a pad commits a record in any ring, a ring comes or
// goes, or napMax; true when the drainer is stopped. Every ring's flag is
// set, then every ring looked at: with records reserved (and not yet
// written), or the loop holding the drainer, it only waits drainEvery.
func (d *Drainer) sleep() bool {
	d.mu.Lock()
	n := &nap{woke: make(chan struct{}, len(d.rings)+1)}
	empty := !d.held.Load() && len(d.later) == 0
	for _, r := range d.rings {
		n.rings = append(n.rings, r)
		if !r.r.Arm() {
			empty = false
		}
	}
	if !empty {
		d.nap = n
		d.wake()
		d.mu.Unlock()
		select {
		case <-d.stop:
			return true
		case <-time.After(drainEvery):
			return false
		}
	}
	for _, r := range n.rings {
		n.wg.Add(1)
		go func() {
			defer n.wg.Done()
			r.r.Sleep(napMax)
			n.woke <- struct{}{}
		}()
	}
	d.nap = n
	d.mu.Unlock()
	stopped := false
	select {
	case <-d.stop:
		stopped = true
	case <-n.woke:
	case <-time.After(napMax):
	}
	d.mu.Lock()
	if d.nap == n {
		d.wake()
	}
	d.mu.Unlock()
	return stopped
}

// wake ends the drainer's nap, under mu: every flag cleared and every
// sleeper woken and gone, before a ring's view can be unmapped (Gone).
func (d *Drainer) wake() {
	n := d.nap
	if n == nil {
		return
	}
	d.nap = nil
	for _, r := range n.rings {
		r.r.Disarm()
	}
	n.wg.Wait()
	select {
	case n.woke <- struct{}{}:
	default:
	}
}
