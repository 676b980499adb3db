package output

import (
	"bytes"
	"encoding/xml"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	prof "github.com/utap/utap/internal/profile"
	"github.com/utap/utap/probe"
)

// Frames of a synthetic program: main → work → malloc, main → free.
var (
	fMain   = probe.Frame{Addr: 0x401100, Object: "/bin/prog", Func: "main", Offset: 0x20, File: "prog.c", Line: 9}
	fWork   = probe.Frame{Addr: 0x401050, Object: "/bin/prog", Func: "work", Offset: 0x10, File: "prog.c", Line: 4}
	fMalloc = probe.Frame{Addr: 0x7f0000001000, Object: "/lib/libc.so.6", Func: "malloc"}
	fFree   = probe.Frame{Addr: 0x7f0000002000, Object: "/lib/libc.so.6", Func: "free"}
	fAnon   = probe.Frame{Addr: 0x7f0000003000, Object: "/lib/libc.so.6"} // no symbol
)

// flameEvents: probe 0 (malloc) has return twin 1; probe 2 (free) is a
// lone entry; a system call's return; a return whose entry came before
// the trace (not counted); a malloc still running at the end (counted,
// untimed).
func flameEvents() []probe.Event {
	mallocStack := []probe.Frame{fMalloc, fWork, fMain}
	return []probe.Event{
		{TimeNs: 50, TID: 7, Func: "malloc", Kind: "return", ProbeIndex: 1, DurationNs: 999},
		{TimeNs: 100, TID: 7, Func: "malloc", Kind: "entry", ProbeIndex: 0, Stack: mallocStack},
		{TimeNs: 200, TID: 7, Func: "malloc", Kind: "return", ProbeIndex: 1, DurationNs: 100, Stack: []probe.Frame{fWork, fMain}},
		{TimeNs: 300, TID: 7, Func: "malloc", Kind: "entry", ProbeIndex: 0, Stack: mallocStack},
		{TimeNs: 400, TID: 8, Func: "free", Kind: "entry", ProbeIndex: 2, Stack: []probe.Frame{fFree, fMain}},
		{TimeNs: 450, TID: 7, Func: "malloc", Kind: "return", ProbeIndex: 1, DurationNs: 150},
		{TimeNs: 500, TID: 8, Func: "write", Kind: "return", ProbeIndex: 3, DurationNs: 1000, Sys: &probe.Syscall{Nr: 1, Returned: true},
			Stack: []probe.Frame{fAnon, fMain}},
		{TimeNs: 510, TID: 8, Func: "write", Kind: "entry", ProbeIndex: 3, Sys: &probe.Syscall{Nr: 1}},
		{TimeNs: 600, TID: 9, Func: "malloc", Kind: "entry", ProbeIndex: 0, Stack: mallocStack},
		// An entry whose frames went unnamed: the leaf is the probe's.
		{TimeNs: 700, TID: 9, Func: "free", Kind: "entry", ProbeIndex: 2, Stack: []probe.Frame{{Addr: 0x7f0000002000}, {Addr: 0x401100}}},
	}
}

func writeFlame(t *testing.T, format string, weight prof.Value) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := New(format, &buf, Options{Calls: map[int]int{0: 1}, Weight: weight})
	if err != nil {
		t.Fatal(err)
	}
	evs := flameEvents()
	for i := range evs {
		if err := w.Write(&evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := End(w); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestFlamePprof reads the profile back with pprof's own library: the
// sample types, the totals, and each frame a location with its function
// and line, deduplicated.
func TestFlamePprof(t *testing.T) {
	p, err := profile.Parse(bytes.NewReader(writeFlame(t, "pprof", prof.Time)))
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, st := range p.SampleType {
		types = append(types, st.Type+"/"+st.Unit)
	}
	if want := []string{"calls/count", "time/nanoseconds"}; !slices.Equal(types, want) || p.DefaultSampleType != "time" {
		t.Errorf("sample types %v (default %q), want %v (default time)", types, p.DefaultSampleType, want)
	}
	var calls, ns int64
	byLeaf := map[string][2]int64{}
	for _, s := range p.Sample {
		calls += s.Value[0]
		ns += s.Value[1]
		leaf := s.Location[0].Line[0].Function.Name
		v := byLeaf[leaf]
		byLeaf[leaf] = [2]int64{v[0] + s.Value[0], v[1] + s.Value[1]}
	}
	// 3 mallocs (one still running), 2 frees, a write.
	if calls != 6 || ns != 100+150+1000 {
		t.Errorf("totals %d calls, %d ns; want 6, 1250", calls, ns)
	}
	want := map[string][2]int64{"malloc": {3, 250}, "free": {2, 0}, "write": {1, 1000}}
	for k, v := range want {
		if byLeaf[k] != v {
			t.Errorf("%s: %v, want %v (all: %v)", k, byLeaf[k], v, byLeaf)
		}
	}
	// main, work, malloc, free, the unnamed libc frame, write; the
	// unnamed free and its caller, the latter "[unknown]".
	if len(p.Location) != 8 || len(p.Function) != 7 || len(p.Mapping) != 2 {
		t.Errorf("%d locations, %d functions, %d mappings; want 8, 7, 2:\n%s", len(p.Location), len(p.Function), len(p.Mapping), p)
	}
	for _, l := range p.Location {
		fn := l.Line[0].Function
		switch fn.Name {
		case "work":
			if fn.Filename != "prog.c" || l.Line[0].Line != 4 || l.Address != 0x401050 || l.Mapping.File != "/bin/prog" {
				t.Errorf("work's location: %#x %s:%d in %v", l.Address, fn.Filename, l.Line[0].Line, l.Mapping)
			}
		case "[libc.so.6]":
			if l.Mapping.File != "/lib/libc.so.6" {
				t.Errorf("unnamed frame's mapping %v", l.Mapping)
			}
		case "write":
			if l.Mapping != nil {
				t.Errorf("the system call's own frame has a mapping %v", l.Mapping)
			}
		}
	}
	// Calls alone: one sample type, no time.
	p, err = profile.Parse(bytes.NewReader(writeFlameEntries(t)))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.SampleType) != 1 || p.SampleType[0].Type != "calls" || len(p.Sample) != 1 || p.Sample[0].Value[0] != 2 {
		t.Errorf("untimed profile:\n%s", p)
	}
}

// writeFlameEntries profiles two lone entries with the same stack.
func writeFlameEntries(t *testing.T) []byte {
	var buf bytes.Buffer
	w, _ := New("pprof", &buf, Options{})
	for range 2 {
		w.Write(&probe.Event{TID: 1, Func: "work", Kind: "entry", Stack: []probe.Frame{fWork, fMain}})
	}
	if err := End(w); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestFlameFolded: flamegraph.pl's lines, outermost frame first, sorted,
// weighed by calls or by time.
func TestFlameFolded(t *testing.T) {
	for _, c := range []struct {
		weight prof.Value
		want   string
	}{
		{prof.Calls, "[unknown];free 1\nmain;[libc.so.6];write 1\nmain;free 1\nmain;work;malloc 3\n"},
		{prof.Time, "main;[libc.so.6];write 1000\nmain;work;malloc 250\n"},
	} {
		if got := string(writeFlame(t, "folded", c.weight)); got != c.want {
			t.Errorf("weight %d:\n%s\nwant\n%s", c.weight, got, c.want)
		}
	}
}

// TestFlameSVG: the flame graph is well-formed XML, a rectangle with a
// hover title per frame, named where the name fits.
func TestFlameSVG(t *testing.T) {
	data := writeFlame(t, "flamegraph", prof.Calls)
	d := xml.NewDecoder(bytes.NewReader(data))
	var titles []string
	var rects int
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%v:\n%s", err, data)
		}
		if se, ok := tok.(xml.StartElement); ok {
			switch se.Name.Local {
			case "rect":
				rects++
			case "title":
				var s string
				if err := d.DecodeElement(&s, &se); err != nil {
					t.Fatal(err)
				}
				titles = append(titles, s)
			}
		}
	}
	want := []string{"all (6 calls, 100.00%)", "[unknown] (1 call, 16.67%)", "free (1 call, 16.67%)",
		"main (5 calls, 83.33%)", "[libc.so.6] (1 call, 16.67%)", "write (1 call, 16.67%)",
		"free (1 call, 16.67%)", "work (3 calls, 50.00%)", "malloc (3 calls, 50.00%)"}
	if !slices.Equal(titles, want) {
		t.Errorf("titles\n%q\nwant\n%q", titles, want)
	}
	if rects != len(want)+1 { // and the background
		t.Errorf("%d rects, want %d", rects, len(want)+1)
	}
	if !strings.Contains(string(data), ">malloc</text>") {
		t.Errorf("no malloc label:\n%s", data)
	}
}

// TestFlameSVGFit: a name too long for its frame is cut with "..".
func TestFlameSVGFit(t *testing.T) {
	var buf bytes.Buffer
	w, _ := New("flamegraph", &buf, Options{})
	long := strings.Repeat("x", 300) // half the graph: about 98 characters show
	w.Write(&probe.Event{Func: "tiny<&>", Kind: "entry", Stack: []probe.Frame{{Func: "tiny<&>"}}})
	for range 500 {
		w.Write(&probe.Event{Func: long, Kind: "entry", Stack: []probe.Frame{{Func: long}}})
		w.Write(&probe.Event{Func: "big", Kind: "entry", Stack: []probe.Frame{{Func: "big"}}})
	}
	if err := End(w); err != nil {
		t.Fatal(err)
	}
	s := buf.String()
	if err := xml.Unmarshal(buf.Bytes(), new(struct{})); err != nil {
		t.Fatalf("%v:\n%s", err, s)
	}
	if !strings.Contains(s, ">"+strings.Repeat("x", 20)) || strings.Contains(s, ">"+long+"<") ||
		!strings.Contains(s, "x..</text>") || !strings.Contains(s, "<title>"+long+" (500 calls") {
		t.Errorf("the long name is not cut in its frame, or not whole in its title:\n%s", s)
	}
	if !strings.Contains(s, "<title>tiny&lt;&amp;&gt; (1 call") {
		t.Errorf("tiny<&> not escaped in its title:\n%s", s)
	}
	if strings.Contains(s, "serif\">tiny") {
		t.Errorf("tiny<&> is labelled in a frame too narrow for it:\n%s", s)
	}
}
