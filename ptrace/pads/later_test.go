package pads

import (
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/utap/utap/internal/pad"
	"github.com/utap/utap/probe"
)

// TestStopWaitsForEarlierRecords: a stop's events (a thread's end) come
// after every record reserved before the stop, even one another thread
// is still writing: the loop does not wait, the events do.
func TestStopWaitsForEarlierRecords(t *testing.T) {
	var mu sync.Mutex
	var got []string
	d := New(func(ev *probe.Event) {
		mu.Lock()
		got = append(got, ev.Kind)
		mu.Unlock()
	}, false)
	d.SiteIDs("p", func() []*Site { return []*Site{{Probe: "p", Func: "f"}} })
	const n = 16
	view := make([]byte, pad.Size(n))
	if _, err := d.Add(1, 0, n, uint64(len(view)), view, Owners{}); err != nil {
		t.Fatal(err)
	}
	defer d.Halt()
	w := func(off int) *uint64 { return (*uint64)(unsafe.Pointer(&view[off])) }
	rec := func(i uint64) int { return pad.HeaderSize + int(i)*pad.RecSize }
	// One thread reserves and claims record 0, and is preempted there;
	// another writes record 1 and stops.
	atomic.StoreUint64(w(pad.OffHead), 2)
	atomic.StoreUint64(w(rec(0)+pad.RecSeq), pad.Busy)
	*w(rec(1) + pad.RecTSC) = 2
	atomic.StoreUint64(w(rec(1)+pad.RecSeq), 1)
	d.Hold()
	d.Release(1, []*probe.Event{{Kind: "exit"}})
	mu.Lock()
	early := slices.Clone(got)
	mu.Unlock()
	if len(early) != 0 {
		t.Fatalf("emitted %v while record 0 was being written", early)
	}
	*w(rec(0) + pad.RecTSC) = 1
	atomic.StoreUint64(w(rec(0)+pad.RecSeq), 1)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		mu.Lock()
		g := slices.Clone(got)
		mu.Unlock()
		if want := []string{"entry", "entry", "exit"}; slices.Equal(g, want) {
			return
		} else if len(g) >= len(want) || time.Now().After(deadline) {
			t.Fatalf("emitted %v, want %v", g, want)
		}
	}
}
