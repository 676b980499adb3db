package profile

import (
	"path/filepath"
	"strconv"
	"strings"

	"github.com/utap/utap/probe"
)

// Value is what a folded stack or a flame graph weighs frames by.
type Value uint8

const (
	Calls Value = iota // the number of calls
	Time               // the time spent in them, nanoseconds
)

// Stacks aggregates calls by stack: the same frames, in the same order,
// are one sample, so memory grows with distinct stacks, not with events.
type Stacks struct {
	samples []*sample
	byKey   map[string]*sample
	timed   bool // some call had a duration: Time is worth writing
	first   int64
	last    int64
	key     []byte
}

// sample is one distinct stack, innermost frame first, and its totals.
type sample struct {
	frames []probe.Frame
	calls  int64
	ns     int64
}

// Add counts calls with their total duration ns under stack, innermost
// frame first; the frames are copied. t is the event's time
// (CLOCK_MONOTONIC), for the profile's start and length; 0 if unknown.
func (s *Stacks) Add(stack []probe.Frame, calls, ns, t int64) {
	if s.byKey == nil {
		s.byKey = map[string]*sample{}
	}
	if t > 0 {
		if s.first == 0 || t < s.first {
			s.first = t
		}
		s.last = max(s.last, t)
	}
	k := s.key[:0]
	for i := range stack {
		f := &stack[i]
		k = strconv.AppendUint(k, f.Addr, 16)
		k = append(k, 0)
		k = append(k, f.Object...)
		k = append(k, 0)
		k = append(k, f.Func...)
		k = append(k, 0)
		k = append(k, f.File...)
		k = append(k, 0)
		k = strconv.AppendInt(k, int64(f.Line), 10)
		k = append(k, 1)
	}
	s.key = k
	sm := s.byKey[string(k)]
	if sm == nil {
		sm = &sample{frames: append([]probe.Frame(nil), stack...)}
		s.byKey[string(k)] = sm
		s.samples = append(s.samples, sm)
	}
	sm.calls += calls
	sm.ns += ns
	if ns > 0 {
		s.timed = true
	}
}

// Timed says whether some call had a duration.
func (s *Stacks) Timed() bool { return s.timed }

// Calls is the number of calls added.
func (s *Stacks) Calls() int64 {
	var n int64
	for _, sm := range s.samples {
		n += sm.calls
	}
	return n
}

func (sm *sample) value(v Value) int64 {
	if v == Time {
		return sm.ns
	}
	return sm.calls
}

// FrameName is a frame as folded stacks and flame graphs name it: its
// function, else its object's base name in brackets (as perf script shows
// an unnamed address), else "[unknown]". The characters that separate
// frames and lines in folded stacks are replaced.
func FrameName(f *probe.Frame) string {
	name := f.Func
	switch {
	case name != "":
	case f.Object != "":
		name = "[" + filepath.Base(f.Object) + "]"
	default:
		name = "[unknown]"
	}
	return strings.Map(func(r rune) rune {
		if r == ';' || r == '\n' || r == '\r' {
			return '_'
		}
		return r
	}, name)
}
