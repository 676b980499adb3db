package pads

import (
	"slices"

	"github.com/utap/utap/internal/bytecode"
	"github.com/utap/utap/internal/pad"
	"github.com/utap/utap/probe"
)

// Site is what a record's event says of its probe.
type Site struct {
	Probe   string // probe.Event.Probe
	Func    string
	Index   int                 // probe.Event.ProbeIndex
	Fetches []*bytecode.Program // the values, in record order
	// Return: a return pad's site; in a counting trace it keeps a tally
	// block (pad.Tally) rather than a counter.
	Return bool
	// Where: where fetch i's value is, when not in record value i (nil:
	// each is): record value Where[i] if >= 0, made from the return
	// record's rax by the reader if FromRax (OnlyRet), extra value
	// Extra(k) if ExtraAt(k) (the pad's Spec.Extra).
	Where []int8
	Sys   *SysSite // a system call pad's (sys.go)
	// call: whether its calls may come without events (calls.go), once
	// asked: 0 not yet, 1 yes, 2 no. The drainer's only.
	call int8
	// form: its one-record calls' writer from their numbers, once
	// formed (events.form); nil: they come as Calls.
	form   probe.CallForm
	formed bool
	// entryForm: its entries' writer from their numbers when nothing
	// returns to it (events.entryForm), once formed.
	entryForm   probe.CallForm
	entryFormed bool
}

// FromRax and ExtraAt are Site.Where's values for a fetch not in a
// record value.
const FromRax int8 = -1

func ExtraAt(k int) int8 { return int8(-2 - k) }

// recorded is the values of s's fetches its records hold.
func (s *Site) recorded() int {
	if s.Where == nil {
		return len(s.Fetches)
	}
	n := 0
	for _, w := range s.Where {
		if w >= 0 {
			n++
		}
	}
	return n
}

// NewSite is the event side of site s, whose pad fetches with fetches.
func NewSite(s *probe.Site, fetches []*bytecode.Program) *Site {
	return &Site{Probe: s.Spec.Text, Func: s.Func, Index: s.Probe, Fetches: fetches}
}

// Ring is one process's ring, as mapped in it and in the tracer.
type Ring struct {
	Pid  int
	Addr uint64 // in the process
	N    int    // records
	Size uint64 // bytes mapped
	view []byte // the tracer's mapping; nil for a fork child's copy
	r    *pad.Ring
	fs   Owners // shared with the process's, read under mu
	// The last fs base looked up, and its tid (record); lastOK is
	// cleared whenever fs changes.
	lastFS  uint64
	lastTID int
	lastOK  bool
	lastNs  int64 // the last event's time: times never go back
	// head: the records reserved as a drain began, read before the
	// owners the loop saw were taken in (takeIn): the drain's bound.
	head uint64
	// vforks: the records of vfork children (vfork.go).
	vforks []*Window
	gone   bool // unmapped here (Gone)
	// spin: its pads' spin while they wait for the terminal (0: they
	// do not).
	spin uint64
	// Quiet: a process not asked for (a fork child without -f, traced
	// for the filter's sake): its records are read and dropped.
	Quiet bool
}

// Copy is a fork child's copy of r: the same place in the child, no view
// of the tracer's.
func (r *Ring) Copy() *Ring { return &Ring{Addr: r.Addr, N: r.N, Size: r.Size} }

// View is the tracer's mapping of r; nil for a fork child's copy.
func (r *Ring) View() []byte { return r.view }

// Mapped says whether the tracer reads r (it is not a fork child's copy).
func (r *Ring) Mapped() bool { return r.view != nil }

// SetRseq and Rseq: the offset of a thread's struct rseq from its fs
// base, which a counting trace's pads add per CPU with (pad.OffRseq).
func (r *Ring) SetRseq(off uint64) { r.r.SetRseq(off) }
func (r *Ring) Rseq() uint64 {
	if r.r == nil {
		return 0
	}
	return r.r.Rseq()
}

// Reserved is the index of the next record a pad will reserve.
func (r *Ring) Reserved() uint64 { return r.r.Reserved() }

// Add makes view, the tracer's mapping of pid's ring of n records at addr
// (size bytes), a ring the drainer reads, with the process's fs owners.
func (d *Drainer) Add(pid int, addr uint64, n int, size uint64, view []byte, fs Owners) (*Ring, error) {
	r, err := pad.NewRing(view, n)
	if err != nil {
		return nil, err
	}
	pr := &Ring{Pid: pid, Addr: addr, N: n, Size: size, view: view, r: r, fs: fs}
	// A call's entry held for its return, at a drain's end, goes out
	// before a pad may write over its strings.
	r.SetDrained(d.ev.end)
	if d.waits.Lossy {
		r.SetLossy()
	}
	if d.waits.Sync {
		pr.spin = d.waits.spin()
		r.SetSync(pr.spin)
	}
	d.mu.Lock()
	d.wake() // the drainer sleeps on the rings it had
	if i := slices.IndexFunc(d.rings, func(o *Ring) bool { return o.Pid == pid }); i >= 0 {
		d.rings[i] = pr
	} else {
		d.rings = append(d.rings, pr)
	}
	d.aggAdded(pr)
	d.mu.Unlock()
	d.start()
	return pr, nil
}

// SyncAtWrites moves r's waits for the terminal from each record to its
// sync points (pad.Ring.SyncAtWrites), with the same spin; false if r
// has no waits for the terminal or is a fork child's copy.
func (r *Ring) SyncAtWrites() bool {
	if r.r == nil || r.spin == 0 {
		return false
	}
	r.r.SyncAtWrites(r.spin)
	return true
}

// Gone drains r a last time, counts its drops and forgets it; the caller
// unmaps its view (returned, nil for a copy).
func (d *Drainer) Gone(r *Ring) []byte {
	if r.view == nil {
		return nil // a fork child's copy of its parent's
	}
	d.mu.Lock()
	d.wake() // nothing sleeps on its view once it is unmapped
	if slices.Contains(d.rings, r) {
		d.catchUp(r, true)
		d.drainAll()
		r.r.DrainLast(r.records(d))
		d.aggGone(r)
		d.rings = slices.DeleteFunc(d.rings, func(o *Ring) bool { return o == r })
		if d.tally {
			for id := range min(len(d.sites), pad.MaxCounted) {
				d.counts.add(uint32(id), r.r.TallyCount(id))
				if d.sites[id].Return {
					d.addTimed(uint32(id), r.r.Tally(id))
				}
			}
		}
	}
	d.lost += r.r.Drops()
	d.waited += r.r.Waited()
	d.retMissed += r.r.RetMissed()
	r.gone = true
	d.mu.Unlock()
	return r.view
}

// StopWaits makes r's full ring drop from now on and its waiting pads
// drop: its pads are about to be taken out, and a thread stepped out of
// one must not wait for the drainer (the loop may hold it).
func (r *Ring) StopWaits() {
	if r.r != nil && !r.gone {
		r.r.SetLossy()
	}
}
