//go:build linux && amd64

package ptrace

import (
	"slices"
	"strings"
	"testing"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/probe"
)

// TestPadReadFixup: a pad's reads are plain loads while the tracer lives;
// a bad pointer faults and the tracer sends the thread to the load's
// fix-up (the value unreadable, the program unharmed), once: the site's
// reads go through system calls after its first fault. The values are
// the breakpoints' (--no-pads).
func TestPadReadFixup(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "pad_strs.c")
	sites := []probe.Site{specSite(t, bin, "show", "show(str(arg1), *(int*)arg2)")}
	target := probe.Target{Argv: []string{bin}}
	pe, pout, pres, st := padRun(t, false, target, sites)
	be, bout, _, _ := padRun(t, true, target, sites)
	if st.pads != 1 || pout != "94\n" || bout != pout || pres.ExitCode != 0 {
		t.Fatalf("pads %d, output %q (breakpoints %q), exit %d", st.pads, pout, bout, pres.ExitCode)
	}
	// The first hit with a bad pointer faults (both its reads may), then
	// the site reads by system calls.
	if st.padFixups < 1 || st.padFixups > 2 {
		t.Fatalf("%d fix-ups, want 1 or 2", st.padFixups)
	}
	if len(pe) != len(be) {
		t.Fatalf("%d events with pads, %d with breakpoints", len(pe), len(be))
	}
	for i := range pe {
		for j := range pe[i].Args {
			if pe[i].Args[j] != be[i].Args[j] {
				t.Fatalf("event %d value %d: pads %+v, breakpoints %+v", i, j, pe[i].Args[j], be[i].Args[j])
			}
		}
	}
}

// TestPadReturnReads: a return pad reads memory at the return through
// the entry's arguments its entry pad kept on the shadow stack (an output
// argument: read's +string[retval]), strings and sized strings whose
// size is the return value, at good and bad pointers; the values are
// the breakpoints', and no call stops.
func TestPadReturnReads(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "pad_strs.c")
	a1, a2 := probe.EntryArg(1), probe.EntryArg(2)
	for name, fetches := range map[string][]probe.Fetch{
		"str, int": {{Text: "s", Expr: &probe.StrOf{Addr: a1}}, {Text: "p", Expr: &probe.Deref{Addr: a2, T: probe.S32}, Format: probe.FormatDec}},
		// p's low bits: its value, and the same whatever ASLR did.
		"buf[ret]": {{Text: "buf", Expr: &probe.StrOf{Addr: a1, Len: probe.BuiltinRet}},
			{Text: "p", Expr: &probe.Binary{Op: probe.OpAnd, X: a2, Y: &probe.Const{Val: 0xfff, T: probe.U64}, T: probe.U64}, Format: probe.FormatDec}},
	} {
		t.Run(name, func(t *testing.T) {
			sites := []probe.Site{siteAt(t, bin, "show", 0), retSite(t, bin, "show", fetches...)}
			target := probe.Target{Argv: []string{bin}}
			pe, pout, pres, st := padRun(t, false, target, sites)
			be, bout, _, _ := padRun(t, true, target, sites)
			if st.pads != 1 || pout != "94\n" || bout != pout || pres.ExitCode != 0 {
				t.Fatalf("pads %d, output %q (breakpoints %q), exit %d", st.pads, pout, bout, pres.ExitCode)
			}
			if st.stops > 20 {
				t.Errorf("%d stops with pads: the returns stopped", st.stops)
			}
			if pl, bl := threadLines(pe), threadLines(be); !slices.Equal(pl, bl) {
				t.Fatalf("pads' events:\n%s\nbreakpoints':\n%s", strings.Join(pl, "\n--\n"), strings.Join(bl, "\n--\n"))
			}
			var strs, bad int
			for _, e := range pe {
				if e.Kind == "return" && len(e.Args) > 0 {
					if e.Args[0].IsStr {
						strs++
					}
					if e.Args[0].Err {
						bad++
					}
				}
			}
			if strs == 0 || bad == 0 {
				t.Fatalf("%d strings and %d unreadable values read at the returns, want some of each", strs, bad)
			}
		})
	}
}

// TestPadExtraValues: a probe with more values than a record holds keeps
// the plain ones past it in the pad (an entry's six arguments; a return
// reading a string and three of the entry's arguments): the breakpoints'
// events, no stop.
func TestPadExtraValues(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "pad_six.c")
	entry := specSite(t, bin, "six", "six(str(arg1), arg2, arg3, arg4, arg5, arg6)")
	ret := retSite(t, bin, "six", probe.Fetch{Text: "s", Expr: &probe.StrOf{Addr: probe.EntryArg(1)}},
		probe.Fetch{Text: "b", Expr: probe.EntryArg(2), Format: probe.FormatDec},
		probe.Fetch{Text: "c", Expr: probe.EntryArg(3), Format: probe.FormatDec},
		probe.Fetch{Text: "d", Expr: probe.EntryArg(4), Format: probe.FormatDec})
	target := probe.Target{Argv: []string{bin}}
	pe, pout, pres, st := padRun(t, false, target, []probe.Site{entry, ret})
	be, bout, _, _ := padRun(t, true, target, []probe.Site{entry, ret})
	if st.pads != 1 || pout == "" || bout != pout || pres.ExitCode != 0 {
		t.Fatalf("pads %d, output %q (breakpoints %q), exit %d", st.pads, pout, bout, pres.ExitCode)
	}
	if st.stops > 20 {
		t.Errorf("%d stops with pads", st.stops)
	}
	if len(pe) != 100 {
		t.Fatalf("%d events, want 100", len(pe))
	}
	if pl, bl := threadLines(pe), threadLines(be); !slices.Equal(pl, bl) {
		t.Fatalf("pads' events:\n%s\nbreakpoints':\n%s", strings.Join(pl, "\n--\n"), strings.Join(bl, "\n--\n"))
	}
	if a := pe[0].Args; len(a) != 6 || a[4].Int != 1<<40 || int64(a[5].Int) != -7 {
		t.Fatalf("the first call's arguments: %+v", a)
	}
}
