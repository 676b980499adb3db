package output

import (
	"bytes"
	"testing"

	"github.com/utap/utap/probe"
)

// Probe 0 is malloc's entry with its twin 1; probe 2 an explicit return.
func callEvents() []probe.Event {
	ent := func(tid int, fn string, arg uint64) probe.Event {
		return probe.Event{TID: tid, Func: fn, Kind: "entry", ProbeIndex: 0, Args: []probe.Value{{Int: arg}}}
	}
	ret := func(tid int, fn string, v uint64) probe.Event {
		return probe.Event{TID: tid, Func: fn, Kind: "return", ProbeIndex: 1, Ret: &probe.Value{Int: v, Format: probe.FormatPointer}}
	}
	return []probe.Event{
		ent(1, "malloc", 24), ret(1, "malloc", 0x10), // one line
		ent(1, "fopen", 1), ent(1, "malloc", 2), ret(1, "malloc", 0x20), ret(1, "fopen", 0), // nested
		ent(1, "malloc", 3), ent(2, "malloc", 4), ret(1, "malloc", 0x30), ret(2, "malloc", 0x40), // threads
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
[pid 1] fopen(1 <unfinished ...>
[pid 1] malloc(2) = 0x20
[pid 1] <... fopen resumed> ) = NULL
[pid 1] malloc(3 <unfinished ...>
[pid 2] malloc(4 <unfinished ...>
[pid 1] <... malloc resumed> ) = 0x30
[pid 2] <... malloc resumed> ) = 0x40
[pid 1] open() = 3
[pid 1] exit(0 <unfinished ...>
`},
		{2, `[pid 1] malloc(24) = 0x10
[pid 1] fopen(1 <unfinished ...>
[pid 1]   malloc(2) = 0x20
[pid 1] <... fopen resumed> ) = NULL
[pid 1] malloc(3 <unfinished ...>
[pid 2] malloc(4 <unfinished ...>
[pid 1] <... malloc resumed> ) = 0x30
[pid 2] <... malloc resumed> ) = 0x40
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
	} {
		if got := string(formatValue(nil, &tc.v, 32)); got != tc.want {
			t.Errorf("%+v = %s, want %s", tc.v, got, tc.want)
		}
	}
}
