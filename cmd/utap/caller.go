//go:build linux && amd64

package main

import (
	"slices"
	"sync"

	"github.com/utap/utap/probe"
)

// -i shows, as ltrace -i does, where each call returns to: the return
// address, read from the stack at the function's entry by a fetch the
// CLI adds to the entry sites (the engines read registers and memory for
// any fetch; nothing else is needed of them), then takes off the event.

// callerFetch reads the return address at a function's entry.
var callerFetch = probe.Fetch{Expr: &probe.Deref{T: probe.U64, Addr: &probe.Reg{Name: "rsp"}}, Format: probe.FormatHex, Text: "caller"}

// callers adds and takes the fetch, and gives a call's return line the
// address of its entry.
type callers struct {
	mu     sync.Mutex
	marked map[probeFunc]bool // sites given the fetch
	twins  map[int]bool       // probe indexes of return twins
	open   map[int][]uint64   // tid → callers of the calls entered, return not seen
}

func newCallers(calls map[int]int) *callers {
	c := &callers{marked: map[probeFunc]bool{}, twins: map[int]bool{}, open: map[int][]uint64{}}
	for _, r := range calls {
		c.twins[r] = true
	}
	return c
}

// add gives the entry sites on a function's start the fetch.
func (c *callers) add(sites []probe.Site) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range sites {
		s := &sites[i]
		if s.Syscall || s.USDT || s.Spec.Kind != probe.Entry || s.Addr != s.FuncAddr {
			continue
		}
		s.Fetches = append(slices.Clip(s.Fetches), callerFetch)
		c.marked[probeFunc{s.Probe, s.Func}] = true
	}
}

// take moves the fetched address off an entry event into Caller, and
// puts it on its return twin's event.
func (c *callers) take(ev *probe.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case ev.Kind == "entry" && c.marked[probeFunc{ev.ProbeIndex, ev.Func}] && len(ev.Args) > 0:
		last := ev.Args[len(ev.Args)-1]
		ev.Args = ev.Args[:len(ev.Args)-1]
		if !last.Err {
			ev.Caller = last.Int
		}
		c.open[ev.TID] = append(c.open[ev.TID], ev.Caller)
	case ev.Kind == "return" && c.twins[ev.ProbeIndex]:
		if st := c.open[ev.TID]; len(st) > 0 {
			ev.Caller = st[len(st)-1]
			c.open[ev.TID] = st[:len(st)-1]
		}
	}
}
