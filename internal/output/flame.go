package output

import (
	"io"

	"github.com/utap/utap/internal/profile"
	"github.com/utap/utap/probe"
)

// flame gathers calls by stack for the profile formats (pprof, folded,
// flamegraph) and writes the profile when the trace ends. A call is
// counted once: at its entry probe's return twin when it has one (the
// entry's stack, the return's duration), else at its entry, at a lone
// return probe, or at a system call's return. The entry's stack has the
// probed function as its leaf; a return or a system call gets its function
// added as the leaf, since its stack starts in the caller.
type flame struct {
	w      io.Writer
	format string
	weight profile.Value
	opens  map[int]bool   // entry probes with a return twin
	twinOf map[int]int    // return twin → its entry probe
	open   map[int][]call // calls entered and not yet returned, per thread
	stacks profile.Stacks
}

// call is an entry waiting for its return.
type call struct {
	probe int
	stack []probe.Frame
	t     int64
}

func newFlame(format string, w io.Writer, o Options) *flame {
	f := &flame{w: w, format: format, weight: o.Weight, opens: map[int]bool{}, twinOf: map[int]int{}, open: map[int][]call{}}
	for entry, ret := range o.Calls {
		f.opens[entry], f.twinOf[ret] = true, entry
	}
	return f
}

func (f *flame) Write(ev *probe.Event) error {
	switch {
	case ev.Sys != nil:
		if ev.Kind == "return" {
			f.stacks.Add(withLeaf(ev), 1, ev.DurationNs, ev.TimeNs)
		}
	case ev.Kind == "entry" && f.opens[ev.ProbeIndex]:
		f.open[ev.TID] = append(f.open[ev.TID], call{ev.ProbeIndex, entryStack(ev), ev.TimeNs})
	case ev.Kind == "entry":
		f.stacks.Add(entryStack(ev), 1, 0, ev.TimeNs)
	case ev.Kind == "return":
		entry, twin := f.twinOf[ev.ProbeIndex]
		if !twin {
			f.stacks.Add(withLeaf(ev), 1, ev.DurationNs, ev.TimeNs)
			return nil
		}
		open := f.open[ev.TID]
		for i := len(open) - 1; i >= 0; i-- {
			if open[i].probe != entry {
				continue
			}
			// Calls entered above it never returned (a longjmp, an
			// exception): counted, untimed.
			for _, c := range open[i+1:] {
				f.stacks.Add(c.stack, 1, 0, c.t)
			}
			f.stacks.Add(open[i].stack, 1, ev.DurationNs, open[i].t)
			f.open[ev.TID] = open[:i]
			return nil
		}
		// Its entry came before the trace: not a call seen whole.
	}
	return nil
}

// entryStack is a copy of an entry event's stack, its leaf named after the
// probed function when the symbolizer could not name it (the process
// gone before its maps were read).
func entryStack(ev *probe.Event) []probe.Frame {
	if len(ev.Stack) == 0 {
		return withLeaf(ev)
	}
	st := append([]probe.Frame(nil), ev.Stack...)
	if st[0].Func == "" {
		st[0].Func = ev.Func
	}
	return st
}

// withLeaf is the event's stack with its function as the innermost frame.
func withLeaf(ev *probe.Event) []probe.Frame {
	return append([]probe.Frame{{Func: ev.Func}}, ev.Stack...)
}

// Flush does nothing: the profile is written whole at the end.
func (f *flame) Flush() error { return nil }

// End counts the calls still running (untimed) and writes the profile.
func (f *flame) End() error {
	for _, open := range f.open {
		for _, c := range open {
			f.stacks.Add(c.stack, 1, 0, c.t)
		}
	}
	f.open = map[int][]call{}
	switch f.format {
	case "pprof":
		return f.stacks.WritePprof(f.w, f.weight)
	case "folded":
		return f.stacks.WriteFolded(f.w, f.weight)
	}
	title := "utap: calls by stack"
	if f.weight == profile.Time {
		title = "utap: time in calls by stack"
	}
	return f.stacks.WriteSVG(f.w, f.weight, title)
}
