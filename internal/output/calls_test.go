package output

import (
	"bytes"
	"io"
	"math"
	"testing"
	"time"

	"github.com/utap/utap/probe"
)

// Probe 0 is malloc's entry with its twin 1; probe 2 an explicit return.
func callEvents() []probe.Event {
	// Times 1.5 ms apart; a return's call took 1 ms.
	var ns int64 = 1_700_000_000_000_000_000
	ent := func(tid int, fn string, arg uint64) probe.Event {
		ns += 1_500_000
		return probe.Event{TID: tid, Func: fn, Probe: fn, Kind: "entry", ProbeIndex: 0, Args: []probe.Value{{Int: arg}}, TimeNs: ns}
	}
	ret := func(tid int, fn string, v uint64) probe.Event {
		ns += 1_500_000
		return probe.Event{TID: tid, Func: fn, Probe: "return:" + fn, Kind: "return", ProbeIndex: 1, Ret: &probe.Value{Int: v, Format: probe.FormatPointer}, TimeNs: ns, DurationNs: 1_000_000}
	}
	return []probe.Event{
		ent(1, "malloc", 24), ret(1, "malloc", 0x10), // one line
		ent(1, "malloc", 25), ret(1, "malloc", 0x11), // again: the text writer's head kept
		ent(1, "fopen", 1), ent(1, "malloc", 2), ret(1, "malloc", 0x20), ret(1, "fopen", 0), // nested
		ent(1, "malloc", 3), ent(2, "malloc", 4), ret(1, "malloc", 0x30), ret(2, "malloc", 0x40), // threads
		ent(2, "malloc", 5), ret(2, "malloc", 0x50), ent(1, "malloc", 6), ret(1, "malloc", 0x60), // switching
		{TID: 1, Func: "open", Kind: "return", ProbeIndex: 2, Ret: &probe.Value{Int: 3, Signed: true}},
		ent(1, "exit", 0),
	}
}

func TestTextPairsCalls(t *testing.T) {
	for _, tc := range []struct {
		indent int
		want   string
	}{
		{0, `[pid 1] malloc(24) = 0x10
[pid 1] malloc(25) = 0x11
[pid 1] fopen(1 <unfinished ...>
[pid 1] malloc(2) = 0x20
[pid 1] <... fopen resumed> ) = NULL
[pid 1] malloc(3 <unfinished ...>
[pid 2] malloc(4 <unfinished ...>
[pid 1] <... malloc resumed> ) = 0x30
[pid 2] <... malloc resumed> ) = 0x40
[pid 2] malloc(5) = 0x50
[pid 1] malloc(6) = 0x60
[pid 1] open() = 3
[pid 1] exit(0 <unfinished ...>
`},
		{2, `[pid 1] malloc(24) = 0x10
[pid 1] malloc(25) = 0x11
[pid 1] fopen(1 <unfinished ...>
[pid 1]   malloc(2) = 0x20
[pid 1] <... fopen resumed> ) = NULL
[pid 1] malloc(3 <unfinished ...>
[pid 2] malloc(4 <unfinished ...>
[pid 1] <... malloc resumed> ) = 0x30
[pid 2] <... malloc resumed> ) = 0x40
[pid 2] malloc(5) = 0x50
[pid 1] malloc(6) = 0x60
[pid 1] open() = 3
[pid 1] exit(0 <unfinished ...>
`},
	} {
		var buf bytes.Buffer
		w, _ := New("text", &buf, Options{Calls: map[int]int{0: 1}, Indent: tc.indent})
		for _, ev := range callEvents() {
			if err := w.Write(&ev); err != nil {
				t.Fatal(err)
			}
		}
		if err := End(w); err != nil {
			t.Fatal(err)
		}
		if buf.String() != tc.want {
			t.Errorf("-n %d:\n%s\nwant\n%s", tc.indent, buf.String(), tc.want)
		}
	}
}

func TestTypedValues(t *testing.T) {
	for _, tc := range []struct {
		v    probe.Value
		want string
	}{
		{probe.Value{Format: probe.FormatVoid}, "<void>"},
		{probe.Value{Int: 1, Format: probe.FormatBool}, "true"},
		{probe.Value{Int: 0o644, Format: probe.FormatOctal}, "0644"},
		{probe.Value{Int: 'a', Format: probe.FormatChar}, "'a'"},
		{probe.Value{Int: '\n', Format: probe.FormatChar}, `'\n'`},
		{probe.Value{Str: "ab\x00cd", IsStr: true, Format: probe.FormatCStr}, `"ab"`},
		{probe.Value{Str: "ab\x00cd", IsStr: true}, `"ab\0cd"`},
		// ltrace's bitvec: sigaddset's <1,12>, sigfillset's ~<31-32>.
		{probe.Value{Str: "\x02\x10\x00\x00\x00\x00\x00\x00", IsStr: true, Format: probe.FormatBitvec}, "<1,12>"},
		{probe.Value{Str: "\xff\xff\xff\x7f\xfe\xff\xff\xff", IsStr: true, Format: probe.FormatBitvec}, "~<31-32>"},
		{probe.Value{Str: "\x00\x00\x00\x00\x00\x00\x00\x00", IsStr: true, Format: probe.FormatBitvec}, "<>"},
		{probe.Value{Int: 0b1110, Format: probe.FormatBitvec}, "<1-3>"},
	} {
		if got := string(formatValue(nil, &tc.v, 32)); got != tc.want {
			t.Errorf("%+v = %s, want %s", tc.v, got, tc.want)
		}
	}
}

// TestLtraceValueFastPaths: the text writer's shortcuts for integers
// (plainInt, ltraceValue's guess) write what formatValue writes.
func TestLtraceValueFastPaths(t *testing.T) {
	for _, n := range []int64{0, 1, -1, 9999, 10000, 10001, -10000, -10001, 1 << 40, -1 << 40, math.MaxInt64, math.MinInt64} {
		for _, f := range []probe.Format{probe.FormatDefault, probe.FormatGuess, probe.FormatHex, probe.FormatUnsigned} {
			for _, signed := range []bool{false, true} {
				v := probe.Value{Int: uint64(n), Signed: signed, Format: f}
				want := string(formatValue(nil, &v, 32))
				if got := string(ltraceValue(nil, &v, 32)); got != want {
					t.Errorf("ltraceValue(%+v) = %s, want %s", v, got, want)
				}
				tx := &text{}
				if got := string(tx.args(nil, []probe.Value{v})); got != want {
					t.Errorf("args(%+v) = %s, want %s", v, got, want)
				}
				if got := string(tx.result(nil, &v, 0)); got != " = "+want+"\n" {
					t.Errorf("result(%+v) = %q, want %q", v, got, " = "+want+"\n")
				}
			}
		}
	}
}

// pairUp makes each entry followed by a return one event with its Return
// (probe.Target.Pairs), whether or not the two are one call: a writer
// must show what the two events one by one show.
func pairUp(evs []probe.Event) []*probe.Event {
	var out []*probe.Event
	for i := 0; i < len(evs); i++ {
		ev := &evs[i]
		if ev.Kind == "entry" && i+1 < len(evs) && evs[i+1].Kind == "return" {
			ev.Return = &evs[i+1]
			i++
		}
		out = append(out, ev)
	}
	return out
}

// A call in one event writes what its two events write, text or JSON,
// straight or through Periodic (which takes it apart for writers that
// do not take it whole).
func TestCallsInOneEvent(t *testing.T) {
	for _, o := range []Options{{}, {Indent: 2}, {Clock: ClockRelative}, {Durations: true}, {Clock: ClockRelative, Durations: true}} { // not -tt: each writer converts to wall time by its own offset
		o.Calls = map[int]int{0: 1}
		callsInOneEvent(t, o)
		o.Calls = nil // no twins: every entry a line of its own (--entry-only)
		callsInOneEvent(t, o)
	}
}

func callsInOneEvent(t *testing.T, o Options) {
	write := func(format string, periodic bool, evs []*probe.Event) string {
		var buf bytes.Buffer
		w, err := New(format, &buf, o)
		if err != nil {
			t.Fatal(err)
		}
		if periodic {
			w = Periodic(w, 0)
		}
		for _, ev := range evs {
			if err := w.Write(ev); err != nil {
				t.Fatal(err)
			}
		}
		if err := End(w); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	for _, format := range []string{"text", "json"} {
		for _, periodic := range []bool{false, true} {
			if format == "json" && !periodic {
				continue // Periodic takes calls apart for it
			}
			var one []*probe.Event
			evs := callEvents()
			for i := range evs {
				one = append(one, &evs[i])
			}
			want := write(format, periodic, one)
			got := write(format, periodic, pairUp(callEvents()))
			if got != want {
				t.Errorf("%s, periodic %v, %+v: paired\n%s\none by one\n%s", format, periodic, o, got, want)
			}
			if periodic {
				for _, forms := range []bool{false, true} {
					if got := writeCalls(t, format, o, pairUp(callEvents()), forms); got != want {
						t.Errorf("%s, %+v, forms %v: as calls\n%s\none by one\n%s", format, o, forms, got, want)
					}
				}
			}
		}
	}
}

// writeCalls writes each pair of one thread's call as a probe.Call where the writer takes
// one (the in-process pads' lane, probe.Target.Calls), the pair's events
// where it does not; with forms, from its numbers where the writer has a
// form for it (probe.CallForms).
func writeCalls(t *testing.T, format string, o Options, evs []*probe.Event, forms bool) string {
	var buf bytes.Buffer
	fw, err := New(format, &buf, o)
	if err != nil {
		t.Fatal(err)
	}
	w := Periodic(fw, 0)
	if takes := format == "text" || format == "json"; w.TakesCalls() != takes {
		t.Errorf("%s, %+v: TakesCalls %v", format, o, w.TakesCalls())
	}
	for _, ev := range evs {
		c := probe.Call{PID: ev.PID, TID: ev.TID, Probe: ev.Probe, Func: ev.Func, Entry: ev.ProbeIndex, Return: -1, Args: ev.Args}
		r := ev.Return
		if r != nil && r.TID == ev.TID && r.Func == ev.Func { // as the pads make Calls
			c.Return, c.ReturnProbe, c.Out, c.Ret = r.ProbeIndex, r.Probe, r.Args, *r.Ret
			if w.CallsTimed() {
				c.ReturnNs, c.DurationNs = r.TimeNs, r.DurationNs
			}
		}
		if w.CallsTimed() {
			c.TimeNs = ev.TimeNs
		}
		call := c.Return >= 0 || r == nil && ev.Kind == "entry"
		if f := w.Form(&c); forms && call && f != nil {
			vals := append([]probe.Value{}, c.Args...)
			if c.Return >= 0 {
				vals = append(append(vals, c.Out...), c.Ret)
			}
			nums, strs := []uint64{}, []string{}
			for _, v := range vals {
				nums = append(nums, v.Int)
				if v.IsStr {
					strs = append(strs, v.Str)
				}
			}
			var times []int64
			if w.CallsTimed() {
				times = []int64{c.TimeNs, c.ReturnNs, c.DurationNs}
			}
			if err := f.Calls(c.PID, c.TID, nums, strs, times, 1); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if call {
			ok, err := w.Call(&c)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				continue
			}
		}
		if err := w.Write(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := End(w); err != nil { // as write ends it
		t.Fatal(err)
	}
	return buf.String()
}

// BenchmarkTextCall: one call's line, from the event its entry and
// return make together (probe.Target.Pairs), into a buffer written
// nowhere: the text writer's cost per line of the default trace.
func BenchmarkTextCall(b *testing.B) {
	w, _ := New("text", io.Discard, Options{Calls: map[int]int{0: 1}})
	args := []probe.Value{{Int: 1234567, Signed: true}, {Int: 2, Signed: true}}
	ret := probe.Value{Int: 1234569, Signed: true}
	r := probe.Event{TID: 27899, Func: "work", Kind: "return", ProbeIndex: 1, Ret: &ret}
	ev := probe.Event{TID: 27899, Func: "work", Kind: "entry", ProbeIndex: 0, Args: args, Return: &r}
	b.ReportAllocs()
	for b.Loop() {
		if err := w.Write(&ev); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTextCallNoEvents: the same line from a probe.Call, as the
// pads' lane writes it (probe.Target.Calls).
func BenchmarkTextCallNoEvents(b *testing.B) {
	// Into a file: flushed when its buffer fills, not at every line.
	w := Periodic(mustNew(b, Options{Calls: map[int]int{0: 1}}), time.Hour)
	defer w.Close()
	// The default trace's untyped return: ltrace's guess, hex here.
	c := probe.Call{TID: 27899, Func: "work", Entry: 0, Return: 1,
		Args: []probe.Value{{Int: 1234567, Signed: true}, {Int: 2, Signed: true}},
		Ret:  probe.Value{Int: 0x3d0901, Signed: true, Format: probe.FormatGuess}}
	b.ReportAllocs()
	for b.Loop() {
		if ok, err := w.Call(&c); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

func mustNew(b *testing.B, o Options) Writer {
	w, err := New("text", io.Discard, o)
	if err != nil {
		b.Fatal(err)
	}
	return w
}

// BenchmarkTextForm: the same line from its numbers alone
// (probe.CallForms), as the pads' one-record calls write it.
func BenchmarkTextForm(b *testing.B) {
	w := Periodic(mustNew(b, Options{Calls: map[int]int{0: 1}}), time.Hour)
	defer w.Close()
	c := probe.Call{TID: 27899, Func: "work", Entry: 0, Return: 1,
		Args: []probe.Value{{Signed: true}, {Signed: true}},
		Ret:  probe.Value{Signed: true, Format: probe.FormatGuess}}
	f := w.Form(&c)
	// A run of 64 calls, as the pads' drainer passes them.
	var nums []uint64
	for range 64 {
		nums = append(nums, 1234567, 2, 0x3d0901)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := f.Calls(0, 27899, nums, nil, nil, 64); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*64), "ns/call")
}
