package probe

import "testing"

// Unpaired hands an entry and its Return on one by one, in order, and
// leaves the pair as it came for whatever takes it next.
func TestUnpaired(t *testing.T) {
	ret := &Event{Kind: "return"}
	call := &Event{Kind: "entry", Return: ret}
	var got []*Event
	Unpaired(func(ev *Event) {
		if ev.Return != nil {
			t.Errorf("%s event still paired", ev.Kind)
		}
		got = append(got, ev)
	})(call)
	if len(got) != 2 || got[0] != call || got[1] != ret || call.Return != ret {
		t.Fatalf("got %v, call.Return %v", got, call.Return)
	}
}
