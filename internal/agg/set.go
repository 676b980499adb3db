package agg

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// Set is the maps of one trace, in the order they were declared; safe
// for concurrent use (events come in while an interval prints).
type Set struct {
	mu   sync.Mutex
	maps []*Map
}

// ErrKindMismatch is wrapped when one map name is given two functions.
var ErrKindMismatch = fmt.Errorf("one map, two aggregations")

// Map returns the map called name, made on first use. Specs naming the
// same map share it, as bpftrace's probes do; with another function or
// other lhist buckets it is an error.
func (s *Set) Map(name string, k Kind) (*Map, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.maps {
		if m.Name == name {
			if m.Kind != k {
				return nil, fmt.Errorf("map %s is %s in one spec and %s in another: %w", name, m.Kind.Func, k.Func, ErrKindMismatch)
			}
			return m, nil
		}
	}
	m := NewMap(name, k)
	s.maps = append(s.maps, m)
	return m, nil
}

// Add adds one value to m, one of s's maps, under key.
func (s *Set) Add(m *Map, key []Part, v int64) {
	s.mu.Lock()
	m.Add(key, v)
	s.mu.Unlock()
}

// Merge adds a partial aggregate to m, one of s's maps, under key.
func (s *Set) Merge(m *Map, key []Part, st State) {
	s.mu.Lock()
	m.Merge(key, st)
	s.mu.Unlock()
}

// Empty says whether s has no maps.
func (s *Set) Empty() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.maps) == 0
}

// WriteText writes every map as bpftrace prints them at exit.
func (s *Set) WriteText(w io.Writer) error {
	s.mu.Lock()
	var b []byte
	for _, m := range s.maps {
		b = m.AppendText(b)
	}
	s.mu.Unlock()
	_, err := w.Write(b)
	return err
}

// WriteJSON writes every map as one JSON line each.
func (s *Set) WriteJSON(w io.Writer) error {
	s.mu.Lock()
	var b []byte
	for _, m := range s.maps {
		b = m.AppendJSON(b)
	}
	s.mu.Unlock()
	_, err := w.Write(b)
	return err
}

// TimeHeader is the line bpftrace's time() prints before an interval's
// maps: "15:04:05"; in JSON {"type": "time", "data": "15:04:05\n"}.
func TimeHeader(t time.Time, json bool) string {
	if json {
		return fmt.Sprintf(`{"type": "time", "data": "%s\n"}`+"\n", t.Format(time.TimeOnly))
	}
	return t.Format(time.TimeOnly) + "\n"
}
