package output

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/utap/utap/probe"
)

// TestPerfettoDocument: an empty trace is still a document; a call still
// running at the end is closed at the last timestamp; a lone entry is an
// instant and a lone timed return a complete event.
func TestPerfettoDocument(t *testing.T) {
	for _, c := range []struct {
		evs  []probe.Event
		want string // the phases, in order, less the names (M)
	}{
		{nil, ""},
		{[]probe.Event{
			{TimeNs: 1000, PID: 1, TID: 1, Func: "f", Kind: "entry", ProbeIndex: 0},
			{TimeNs: 2000, PID: 1, TID: 1, Func: "g", Kind: "entry", ProbeIndex: 2},
			{TimeNs: 3000, PID: 1, TID: 1, Func: "h", Kind: "return", ProbeIndex: 3, DurationNs: 500},
		}, "BiXE"},
		{[]probe.Event{
			{TimeNs: 1000, PID: 1, TID: 2, Func: "f", Kind: "return", ProbeIndex: 1}, // its entry came before
			{TimeNs: 2000, PID: 1, TID: 2, Func: "f", Kind: "entry", ProbeIndex: 0},
			{TimeNs: 3000, PID: 1, TID: 2, Func: "f", Kind: "return", ProbeIndex: 1},
		}, "BE"},
	} {
		var buf bytes.Buffer
		w, err := New("perfetto", &buf, Options{Calls: map[int]int{0: 1}})
		if err != nil {
			t.Fatal(err)
		}
		for i := range c.evs {
			if err := w.Write(&c.evs[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := End(w); err != nil {
			t.Fatal(err)
		}
		var doc struct{ TraceEvents []struct{ Ph string } }
		if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
			t.Fatalf("%v:\n%s", err, buf.Bytes())
		}
		got := ""
		for _, e := range doc.TraceEvents {
			if e.Ph != "M" {
				got += e.Ph
			}
		}
		if got != c.want {
			t.Errorf("phases %q, want %q:\n%s", got, c.want, buf.Bytes())
		}
	}
}
