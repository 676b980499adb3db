package output

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/utap/utap/probe"
)

// TestFormsAsCalls: calls written from their numbers (probe.CallForms)
// make the lines their Calls make, every kind of number, a form's first
// call (not hot) and the next, threads and functions taking turns.
func TestFormsAsCalls(t *testing.T) {
	v := func(u uint64, f probe.Format, signed bool) probe.Value {
		return probe.Value{Int: u, Format: f, Signed: signed}
	}
	neg := uint64(1<<64 - 5)
	calls := []probe.Call{
		{Func: "work", Args: []probe.Value{v(1234567, 0, true), v(2, 0, true)}, Ret: v(0x3d0901, probe.FormatGuess, true)},
		{Func: "work", Args: []probe.Value{v(neg, 0, true), v(neg, 0, false)}, Ret: v(neg, probe.FormatGuess, true)},
		{Func: "hexes", Args: []probe.Value{v(0, probe.FormatPointer, false), v(0x1000, probe.FormatPointer, false), v(255, probe.FormatHex, false)},
			Ret: v(0, probe.FormatPointer, false)},
		{Func: "misc", Args: []probe.Value{v('a', probe.FormatChar, false), v(0o644, probe.FormatOctal, false), v(1, probe.FormatBool, false)},
			Out: []probe.Value{v(7, probe.FormatUnsigned, false)}, Ret: v(neg, probe.FormatDec, true)},
		{Func: "outonly", Out: []probe.Value{v(3, 0, true)}, Ret: v(4, 0, true)},
		{Func: "none", Ret: v(0, probe.FormatVoid, false)},
		// Entries alone (no return twin: --entry-only), with and without
		// arguments.
		{Func: "alone", Args: []probe.Value{v(5, 0, true), v(0x10, probe.FormatHex, false)}, Entry: 2, Return: -1},
		{Func: "nothing", Entry: 2, Return: -1},
		// Strings: a path, one of -s's length (ltrace's "..."), one
		// with a NUL and a quote.
		{Func: "open", Args: []probe.Value{{Str: "/etc/passwd", IsStr: true}, v(2, 0, true)}, Ret: v(3, 0, true)},
		{Func: "open", Args: []probe.Value{{Str: strings.Repeat("a", DefaultStrLen), IsStr: true}, v(0, 0, true)}, Ret: v(neg, 0, true)},
		{Func: "puts", Args: []probe.Value{{Str: "say \"hi\"\x00\n", IsStr: true, Format: probe.FormatCStr}}, Entry: 2, Return: -1},
	}
	for i := range calls {
		calls[i].Probe, calls[i].ReturnProbe = calls[i].Func, ""
		if calls[i].Return == 0 {
			calls[i].Entry, calls[i].Return = 0, 1
		}
	}
	var seq []probe.Call
	ns := int64(1_700_000_000_000_000_000)
	for _, tid := range []int{1, 1, 2, 1} {
		for _, c := range calls {
			c.TID, c.PID = tid, 1
			for range 2 { // twice: a form writes a run
				ns += 1_500_000
				c.TimeNs, c.ReturnNs, c.DurationNs = ns, ns+1_000_000, 1_000_000+ns%7_000
				seq = append(seq, c)
			}
		}
	}
	numbers := func(c probe.Call) ([]uint64, []string) {
		vals := append([]probe.Value{}, c.Args...)
		if c.Return >= 0 {
			vals = append(append(vals, c.Out...), c.Ret)
		}
		var nums []uint64
		var strs []string
		for _, v := range vals {
			nums = append(nums, v.Int)
			if v.IsStr {
				strs = append(strs, v.Str)
			}
		}
		// One more after them, which the form does not read (the
		// lane's typed return).
		return append(nums, 99), strs
	}
	write := func(format string, o Options, forms bool) string {
		var buf bytes.Buffer
		fw, err := New(format, &buf, o)
		if err != nil {
			t.Fatal(err)
		}
		w := Periodic(fw, 0)
		made := map[string]*Form{}
		for i := 0; i < len(seq); i++ {
			c := seq[i]
			if !w.CallsTimed() {
				c.TimeNs, c.ReturnNs, c.DurationNs = 0, 0, 0 // as the engines make them
			}
			if !forms {
				if ok, err := w.Call(&c); err != nil || !ok {
					t.Fatalf("%s: %v %v", c.Func, ok, err)
				}
				continue
			}
			d := seq[i+1] // the run of two
			i++
			key := formKey(c)
			f, ok := made[key]
			if !ok {
				if f = w.Form(&c); f == nil {
					t.Fatalf("%s: no form", c.Func)
				}
				made[key] = f
			}
			nums, strs := numbers(c)
			dnums, dstrs := numbers(d)
			var times []int64
			if w.CallsTimed() {
				times = []int64{c.TimeNs, c.ReturnNs, c.DurationNs, d.TimeNs, d.ReturnNs, d.DurationNs}
			}
			if err := f.Calls(c.PID, c.TID, append(nums, dnums...), append(strs, dstrs...), times, 2); err != nil {
				t.Fatalf("%s: %v", c.Func, err)
			}
		}
		if err := End(w); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	// Not -tt nor -ttt: each writer converts to wall time by its own
	// offset.
	for _, o := range []Options{{}, {Durations: true}, {Clock: ClockRelative}, {Clock: ClockRelative, Durations: true}} {
		o.Calls = map[int]int{0: 1}
		want, got := write("text", o, false), write("text", o, true)
		if got != want {
			t.Errorf("%+v: from numbers:\n%s\nfrom calls:\n%s", o, got, want)
		}
	}
	if want, got := write("json", Options{}, false), write("json", Options{}, true); got != want {
		t.Errorf("json from numbers:\n%s\nfrom calls:\n%s", got, want)
	}
}

// TestNoForms: calls whose lines are not numbers alone, or timed, get
// no form: they come as Calls.
func TestNoForms(t *testing.T) {
	w := Periodic(mustNewT(t, "text", Options{Calls: map[int]int{0: 1}}), 0)
	defer w.Close()
	for _, c := range []probe.Call{
		{Func: "unreadable", Entry: 0, Return: 1, Args: []probe.Value{{Err: true}}},
		{Func: "null", Entry: 0, Return: 1, Args: []probe.Value{{Null: true}}},
		{Func: "named", Entry: 0, Return: 1, Ret: probe.Value{Name: "LC_ALL"}},
		{Func: "entry", Entry: 0, Return: -1},
		{Func: "not twins", Entry: 2, Return: 3},
	} {
		if f := w.Form(&c); f != nil {
			t.Errorf("%s: a form", c.Func)
		}
	}
	nested := Periodic(mustNewT(t, "text", Options{Calls: map[int]int{0: 1}, Indent: 2}), 0) // -n: a line's depth
	if f := nested.Form(&probe.Call{Func: "f", Return: 1}); f != nil {
		t.Error("-n: a form")
	}
}

// formKey says which calls share a form: their values' but numbers.
func formKey(c probe.Call) string {
	c.Args, c.Out = append([]probe.Value{}, c.Args...), append([]probe.Value{}, c.Out...)
	for _, vs := range [][]probe.Value{c.Args, c.Out, {c.Ret}} {
		for i := range vs {
			vs[i].Int, vs[i].Str = 0, "" // a form's calls differ in these alone
		}
	}
	c.Ret.Int, c.TID, c.PID, c.TimeNs, c.ReturnNs, c.DurationNs = 0, 0, 0, 0, 0, 0
	return fmt.Sprintf("%+v", c)
}

func mustNewT(t *testing.T, format string, o Options) Writer {
	w, err := New(format, &bytes.Buffer{}, o)
	if err != nil {
		t.Fatal(err)
	}
	return w
}
