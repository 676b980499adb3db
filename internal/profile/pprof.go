package profile

import (
	"io"

	"github.com/google/pprof/profile"
	"github.com/utap/utap/probe"
)

// WritePprof writes the stacks as a gzipped pprof profile: sample type
// "calls" (count) and, when some call was timed, "time" (nanoseconds, the
// calls' total duration); def names the one pprof shows first. Each
// distinct frame is a Location (its address) with its Function (name,
// source file) and line, in a Mapping per object, all deduplicated.
func (s *Stacks) WritePprof(w io.Writer, def Value) error {
	p := &profile.Profile{
		SampleType:        []*profile.ValueType{{Type: "calls", Unit: "count"}},
		DefaultSampleType: "calls",
		TimeNanos:         monoToUnixNs(s.first),
		DurationNanos:     s.last - s.first,
		Comments:          []string{"utap: calls by user stack at the probes"},
	}
	if s.timed {
		p.SampleType = append(p.SampleType, &profile.ValueType{Type: "time", Unit: "nanoseconds"})
		if def == Time {
			p.DefaultSampleType = "time"
		}
	}
	b := builder{p: p, locs: map[locKey]*profile.Location{}, funcs: map[funcKey]*profile.Function{}, maps: map[string]*profile.Mapping{}}
	for _, sm := range s.samples {
		ps := &profile.Sample{Value: []int64{sm.calls}}
		if s.timed {
			ps.Value = append(ps.Value, sm.ns)
		}
		for i := range sm.frames {
			ps.Location = append(ps.Location, b.location(&sm.frames[i]))
		}
		p.Sample = append(p.Sample, ps)
	}
	if err := p.CheckValid(); err != nil {
		return err // a bug here: the profile would not open
	}
	return p.Write(w)
}

// builder deduplicates a profile's locations, functions and mappings.
type builder struct {
	p     *profile.Profile
	locs  map[locKey]*profile.Location
	funcs map[funcKey]*profile.Function
	maps  map[string]*profile.Mapping
}

type locKey struct {
	addr       uint64
	object, fn string
	file       string
	line       int
}

type funcKey struct{ name, file string }

func (b *builder) location(f *probe.Frame) *profile.Location {
	k := locKey{f.Addr, f.Object, f.Func, f.File, f.Line}
	if l := b.locs[k]; l != nil {
		return l
	}
	l := &profile.Location{ID: uint64(len(b.p.Location) + 1), Address: f.Addr, Mapping: b.mapping(f.Object)}
	l.Line = []profile.Line{{Function: b.function(f), Line: int64(f.Line)}}
	b.locs[k] = l
	b.p.Location = append(b.p.Location, l)
	return l
}

func (b *builder) function(f *probe.Frame) *profile.Function {
	name := FrameName(f)
	k := funcKey{name, f.File}
	if fn := b.funcs[k]; fn != nil {
		return fn
	}
	fn := &profile.Function{ID: uint64(len(b.p.Function) + 1), Name: name, SystemName: name, Filename: f.File}
	b.funcs[k] = fn
	b.p.Function = append(b.p.Function, fn)
	return fn
}

// mapping is the object's Mapping; nil for a frame with none (a system
// call's own frame). Its address range is unknown here (the processes
// may be gone, and each maps it elsewhere): the locations carry their
// functions, so no tool needs it to symbolize them.
func (b *builder) mapping(object string) *profile.Mapping {
	if object == "" {
		return nil
	}
	if m := b.maps[object]; m != nil {
		return m
	}
	m := &profile.Mapping{ID: uint64(len(b.p.Mapping) + 1), File: object,
		HasFunctions: true, HasFilenames: true, HasLineNumbers: true}
	b.maps[object] = m
	b.p.Mapping = append(b.p.Mapping, m)
	return m
}
