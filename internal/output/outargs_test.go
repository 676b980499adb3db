package output

import (
	"bytes"
	"testing"

	"github.com/utap/utap/probe"
)

// TestTextOutArgs: a return carrying output arguments continues its
// entry's list, on the entry's line or resumed after another one, as
// ltrace shows them; with no argument shown at the entry, without a
// leading comma.
func TestTextOutArgs(t *testing.T) {
	str := func(s string) probe.Value { return probe.Value{IsStr: true, Str: s} }
	num := func(n uint64) probe.Value { return probe.Value{Int: n} }
	ent := func(tid int, fn string, args ...probe.Value) probe.Event {
		return probe.Event{TID: tid, Func: fn, Kind: "entry", ProbeIndex: 0, Args: args}
	}
	ret := func(tid int, fn string, r uint64, args ...probe.Value) probe.Event {
		return probe.Event{TID: tid, Func: fn, Kind: "return", ProbeIndex: 1, Ret: &probe.Value{Int: r, Signed: true}, Args: args}
	}
	evs := []probe.Event{
		ent(1, "read", num(3)), ret(1, "read", 12, str("hello-world\n"), num(4096)),
		ent(2, "read", num(4)), ent(1, "read", num(5)), ret(1, "read", 5, str("hello"), num(5)), ret(2, "read", 8, str("pipedata"), num(64)),
		ent(1, "fgets"), ret(1, "fgets", 0x10, str("line\n"), num(64), num(0x20)),
		ent(1, "fgets"), ent(2, "read", num(4)), ret(1, "fgets", 0x10, str("x"), num(2), num(0x20)), ret(2, "read", 0, str(""), num(64)),
	}
	var buf bytes.Buffer
	w, _ := New("text", &buf, Options{Calls: map[int]int{0: 1}})
	for _, ev := range evs {
		if err := w.Write(&ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := End(w); err != nil {
		t.Fatal(err)
	}
	want := `[pid 1] read(3, "hello-world\n", 4096) = 12
[pid 2] read(4 <unfinished ...>
[pid 1] read(5, "hello", 5) = 5
[pid 2] <... read resumed> , "pipedata", 64) = 8
[pid 1] fgets("line\n", 64, 32) = 16
[pid 1] fgets( <unfinished ...>
[pid 2] read(4 <unfinished ...>
[pid 1] <... fgets resumed> "x", 2, 32) = 16
[pid 2] <... read resumed> , "", 64) = 0
`
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
}
