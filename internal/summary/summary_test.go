package summary

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/utap/utap/probe"
)

func ret(fn string, v int64, dur int64) *probe.Event {
	return &probe.Event{Func: fn, Kind: "return", DurationNs: dur, Ret: &probe.Value{Int: uint64(v), Signed: true}}
}

func sample() *Summary {
	s := New()
	for i := range 4 {
		s.Add(&probe.Event{Func: "read", Kind: "entry"})
		s.Add(ret("read", int64(i)-1, 1000*int64(i+1))) // -1 once: an error
	}
	s.Add(ret("work", 7, 300000))
	s.Add(ret("work", 8, 100000))
	// A pointer return is never an error, whatever its bits.
	s.Add(&probe.Event{Func: "malloc", Kind: "return", DurationNs: 500,
		Ret: &probe.Value{Int: 1 << 63, Format: probe.FormatPointer}})
	// Entry-only probes count calls without times.
	for range 3 {
		s.Add(&probe.Event{Func: "tick", Kind: "entry"})
	}
	s.Add(&probe.Event{Probe: "0x401000", Kind: "entry"})
	// A return whose entry was not seen counts, without a time.
	s.Add(ret("work", -4, 0))
	return s
}

func TestLines(t *testing.T) {
	funcs, total := sample().Lines()
	var names []string
	for _, l := range funcs {
		names = append(names, l.Function)
	}
	if got := strings.Join(names, " "); got != "work read malloc tick 0x401000" {
		t.Fatalf("order %q", got)
	}
	work, read := funcs[0], funcs[1]
	if work.Calls != 3 || work.Errors != 1 || work.Timed != 2 || work.TotalNs != 400000 ||
		work.AvgNs != 200000 || work.MinNs != 100000 || work.MaxNs != 300000 {
		t.Errorf("work: %+v", work)
	}
	if read.Calls != 4 || read.Errors != 1 || read.TotalNs != 10000 || read.P50Ns < 1980 || read.P50Ns > 2020 || read.P99Ns != 4000 {
		t.Errorf("read: %+v", read)
	}
	if funcs[2].Errors != 0 || funcs[3].Calls != 3 || funcs[3].Timed != 0 {
		t.Errorf("malloc/tick: %+v %+v", funcs[2], funcs[3])
	}
	if total.Calls != 3+4+1+3+1 || total.Errors != 2 || total.TotalNs != 410500 || total.Percent != 100 ||
		total.MinNs != 500 || total.MaxNs != 300000 {
		t.Errorf("total: %+v", total)
	}
	var pct float64
	for _, l := range funcs {
		pct += l.Percent
	}
	if pct < 99.99 || pct > 100.01 {
		t.Errorf("percentages add up to %g", pct)
	}
}

func TestWriteText(t *testing.T) {
	var b bytes.Buffer
	if err := sample().WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := `% time     seconds  usecs/call     calls    errors   min(us)   max(us)   p50(us)   p99(us) function
------ ----------- ----------- --------- --------- --------- --------- --------- --------- ----------------
 97.44    0.000400         200         3         1       100       300       100       300 work
  2.44    0.000010         2.5         4         1       1.0       4.0       2.0       4.0 read
  0.12    0.000000         0.5         1                 0.5       0.5       0.5       0.5 malloc
                                       3                                                   tick
                                       1                                                   0x401000
------ ----------- ----------- --------- --------- --------- --------- --------- --------- ----------------
100.00    0.000411          58        12         2       0.5       300       3.0       300 total
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestWriteJSON(t *testing.T) {
	var b bytes.Buffer
	if err := sample().WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	if strings.Count(b.String(), "\n") != 1 {
		t.Errorf("not one line: %q", b.String())
	}
	var r Report
	if err := json.Unmarshal(b.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Functions) != 5 || r.Functions[0].Function != "work" || r.Functions[0].P99Ns != 300000 ||
		r.Total.Calls != 12 {
		t.Errorf("decoded %+v", r)
	}
	var raw map[string][]map[string]any
	json.Unmarshal(b.Bytes(), &raw)
	keys := []string{"calls", "errors", "function", "max_ns", "min_ns", "p50_ns", "p99_ns", "percent_time", "timed_calls", "total_ns", "avg_ns"}
	for _, k := range keys {
		if _, ok := raw["functions"][0][k]; !ok {
			t.Errorf("key %q missing", k)
		}
	}

	b.Reset()
	New().WriteJSON(&b)
	if got := strings.TrimSpace(b.String()); !strings.HasPrefix(got, `{"functions":[],"total":`) {
		t.Errorf("empty summary: %s", got)
	}
}

func TestIsError(t *testing.T) {
	for _, tc := range []struct {
		v    *probe.Value
		want bool
	}{
		{nil, false},
		{&probe.Value{Int: ^uint64(0), Signed: true}, true},
		{&probe.Value{Int: ^uint64(0), Format: probe.FormatDec}, true},
		{&probe.Value{Int: ^uint64(0)}, false}, // unsigned
		{&probe.Value{Int: ^uint64(0), Format: probe.FormatHex, Signed: true}, false},
		{&probe.Value{Int: ^uint64(0), Signed: true, Err: true}, false},
		{&probe.Value{Int: 0, Signed: true}, false},
	} {
		if got := IsError(tc.v); got != tc.want {
			t.Errorf("IsError(%+v) = %v", tc.v, got)
		}
	}
}

func BenchmarkAdd(b *testing.B) {
	s := New()
	names := []string{"read", "write", "work", "malloc", "free", "open", "close", "stat"}
	evs := make([]probe.Event, 1024)
	for i := range evs {
		evs[i] = *ret(names[i%len(names)], int64(i%7)-1, int64(1000+i*37))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		s.Add(&evs[i&1023])
	}
}

// TestAddTally: counts made elsewhere (in the kernel) give the report the
// events they stand for would have given.
func TestAddTally(t *testing.T) {
	events, tallied := New(), New()
	durs := []int64{0, 5, 64, 100, 1000, 123456, 7e9}
	tl := probe.Tally{Probe: "return:read", Func: "read", Kind: probe.Return, Durations: map[int]uint64{}}
	for i, d := range durs {
		v := int64(i) - 3
		events.Add(ret("read", v, d))
		events.Add(&probe.Event{Func: "read", Kind: "entry"})
		tl.Hits++
		if v < 0 {
			tl.Errors++
		}
		if d > 0 {
			tl.Durations[Bucket(uint64(d))]++
			tl.DurationSum += uint64(d)
			if tl.DurationMin == 0 || uint64(d) < tl.DurationMin {
				tl.DurationMin = uint64(d)
			}
			tl.DurationMax = max(tl.DurationMax, uint64(d))
		}
	}
	events.Add(&probe.Event{Probe: "0x401000", Kind: "entry"})
	tallied.AddTally(tl)
	tallied.AddTally(probe.Tally{Probe: "read", Func: "read", Kind: probe.Entry, Hits: uint64(len(durs))})
	tallied.AddTally(probe.Tally{Probe: "0x401000", Kind: probe.Entry, Hits: 1})
	a, at := events.Lines()
	b, bt := tallied.Lines()
	if !slices.Equal(a, b) || at != bt {
		t.Errorf("events:\n%+v\n%+v\ntallies:\n%+v\n%+v", a, at, b, bt)
	}
}

// TestRowPerProbeInsideAFunction: a probe at fn+0x48 is not merged with
// fn's own; entry and return probes of fn share one row.
func TestRowPerProbeInsideAFunction(t *testing.T) {
	s := New()
	s.Add(&probe.Event{Probe: "lock", Func: "lock", Kind: "entry"})
	s.Add(&probe.Event{Probe: "return:lock", Func: "lock", Kind: "return", DurationNs: 10})
	s.Add(&probe.Event{Probe: "lock+0x48", Func: "lock", Kind: "entry"})
	s.Add(&probe.Event{Probe: "lock+0x48", Func: "lock", Kind: "entry"})
	if len(s.funcs) != 2 || s.funcs["lock"].calls() != 1 || s.funcs["lock+0x48"].calls() != 2 {
		t.Errorf("rows %v", s.funcs)
	}
}
