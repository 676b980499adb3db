package main

import (
	"strings"
	"testing"

	"github.com/utap/utap/probe"
)

// TestTwinsFollowNotes: the functions whose returns no probe survives
// are said once a reason, named together, and their return twins go.
func TestTwinsFollowNotes(t *testing.T) {
	r := &resolver{user: map[*probe.Spec]bool{}}
	var sites []probe.Site
	for i, fn := range []string{"setjmp", "work", "_setjmp", "__restore_rt", "setjmp"} {
		entry := &probe.Spec{Kind: probe.Entry, Symbol: fn}
		ret := &probe.Spec{Kind: probe.Return, Symbol: fn}
		r.user[entry] = true
		addr := uint64(0x1000 * (i + 1))
		sites = append(sites, probe.Site{Spec: entry, Func: fn, FuncAddr: addr}, probe.Site{Spec: ret, Func: fn, FuncAddr: addr})
	}
	kept := r.twinsFollow(nil, sites)
	returns := 0
	for _, s := range kept {
		if s.Spec.Kind == probe.Return {
			returns++
		}
	}
	if len(kept) != 6 || returns != 1 {
		t.Errorf("%d sites kept, %d returns, want 5 entries and work's return", len(kept), returns)
	}
	if len(r.notes) != 2 || !strings.HasPrefix(r.notes[0], "setjmp, _setjmp: their calls show no return value: each returns twice") ||
		!strings.HasPrefix(r.notes[1], "__restore_rt: its calls show no return value: it is") {
		t.Errorf("notes:\n%s", strings.Join(r.notes, "\n"))
	}
}
