package summary

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/utap/utap/probe"
)

// Summary accumulates events per function. Add is called from the
// engine's emit goroutine; it is not safe for concurrent use.
type Summary struct {
	funcs   map[string]*counts
	offsets map[string]uint64 // probe text → its location's offset (cached parse)
	// What the rows count: system calls, functions, or both.
	syscalls, functions bool
}

type counts struct {
	entries, returns, errors uint64
	time                     Histogram // durations of returns whose entry was seen
}

// calls counts returns when the function has a return probe (a call still
// running at exit is not counted), else entries.
func (c *counts) calls() uint64 {
	if c.returns > 0 {
		return c.returns
	}
	return c.entries
}

// New returns an empty summary.
func New() *Summary { return &Summary{funcs: map[string]*counts{}, offsets: map[string]uint64{}} }

// Add counts one event.
func (s *Summary) Add(ev *probe.Event) {
	switch ev.Kind {
	case "signal", "exit":
		return // strace -c counts calls only
	}
	if ev.Sys != nil {
		s.syscalls = true
	} else {
		s.functions = true
	}
	c := s.of(ev.Func, ev.Probe)
	if ev.Kind != "return" {
		c.entries++
		return
	}
	c.returns++
	if sc := ev.Sys; sc != nil {
		// A system call fails with -errno in [-4095, -1].
		if sc.Returned && sc.Ret < 0 && sc.Ret >= -4095 {
			c.errors++
		}
	} else if IsError(ev.Ret) {
		c.errors++
	}
	if ev.DurationNs > 0 {
		c.time.Record(uint64(ev.DurationNs))
	}
}

// AddTally adds what an engine counted at one probe (probe.Target.Tally):
// the same as adding each of the events it stands for.
func (s *Summary) AddTally(t probe.Tally) {
	s.functions = true
	c := s.of(t.Func, t.Probe)
	if t.Kind != probe.Return {
		c.entries += t.Hits
		return
	}
	c.returns += t.Hits
	c.errors += t.Errors
	c.time.AddBuckets(t.Durations, t.DurationSum, t.DurationMin, t.DurationMax)
}

// of returns the counts of a function (its entry and return probes, the
// -T and -c twins, share a row), of a probe inside it (fn+0x48: a row of
// its own), or of a bare address's probe.
func (s *Summary) of(fn, probeText string) *counts {
	name := fn
	if name == "" {
		name = probeText
	} else if off := s.offset(probeText); off != 0 {
		name = fmt.Sprintf("%s+%#x", fn, off)
	}
	c := s.funcs[name]
	if c == nil {
		c = &counts{}
		s.funcs[name] = c
	}
	return c
}

// offset is the offset inside its function of the location probeText
// names (work+0x4: 4), 0 when it names a function's start or cannot be
// read.
func (s *Summary) offset(probeText string) uint64 {
	off, ok := s.offsets[probeText]
	if !ok {
		if spec, err := probe.Parse(probeText); err == nil && spec.Symbol != "" {
			off = spec.Offset
		}
		s.offsets[probeText] = off
	}
	return off
}

// IsError says whether a return value counts as an error: a negative
// signed integer, the -1 / -errno convention of C, or a NULL pointer where
// the prototype says a pointer is returned (FormatPointer: malloc, fopen).
// Only values shown signed count (a signed return type, or ret:d);
// unsigned, hex and strings never do. A 32-bit int counts when it is typed
// (the prototype's int, cast to 32 bits), not as a raw register.
func IsError(v *probe.Value) bool {
	if v != nil && v.Null {
		return true // a NULL char *, as a NULL pointer
	}
	if v == nil || v.Err || v.IsStr {
		return false
	}
	if v.Format == probe.FormatPointer {
		return v.Int == 0
	}
	signed := v.Format == probe.FormatDec || (v.Format == probe.FormatDefault && v.Signed)
	return signed && int64(v.Int) < 0
}

// Line is one row of the report. Times are in ns; they are 0 when Timed
// is 0 (entry-only probes, or no entry seen for any return).
type Line struct {
	Function string  `json:"function"`
	Calls    uint64  `json:"calls"`
	Errors   uint64  `json:"errors"`
	Timed    uint64  `json:"timed_calls"` // calls with a duration
	Percent  float64 `json:"percent_time"`
	TotalNs  uint64  `json:"total_ns"`
	AvgNs    uint64  `json:"avg_ns"`
	MinNs    uint64  `json:"min_ns"`
	MaxNs    uint64  `json:"max_ns"`
	P50Ns    uint64  `json:"p50_ns"`
	P99Ns    uint64  `json:"p99_ns"`
}

func line(name string, calls, errors uint64, h *Histogram) Line {
	return Line{
		Function: name, Calls: calls, Errors: errors, Timed: h.Count(),
		TotalNs: h.Sum(), AvgNs: h.Mean(), MinNs: h.Min(), MaxNs: h.Max(),
		P50Ns: h.Quantile(0.5), P99Ns: h.Quantile(0.99),
	}
}

// Lines returns the functions in report order, by total time, then calls,
// descending, then by name; and the total over all of them.
func (s *Summary) Lines() (funcs []Line, total Line) {
	var all Histogram
	var calls, errors uint64
	for name, c := range s.funcs {
		funcs = append(funcs, line(name, c.calls(), c.errors, &c.time))
		all.Merge(&c.time)
		calls += c.calls()
		errors += c.errors
	}
	total = line("total", calls, errors, &all)
	for i := range funcs {
		if total.TotalNs > 0 {
			funcs[i].Percent = 100 * float64(funcs[i].TotalNs) / float64(total.TotalNs)
		}
	}
	if total.TotalNs > 0 {
		total.Percent = 100
	}
	slices.SortFunc(funcs, func(a, b Line) int {
		if c := cmp.Compare(b.TotalNs, a.TotalNs); c != 0 {
			return c
		}
		if c := cmp.Compare(b.Calls, a.Calls); c != 0 {
			return c
		}
		return cmp.Compare(a.Function, b.Function)
	})
	return funcs, total
}
