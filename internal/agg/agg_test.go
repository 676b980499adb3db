package agg

import (
	"strings"
	"testing"
)

// The expected texts are bpftrace v0.2x's own output for the same values
// (bpftrace -e 'BEGIN { @h = hist(5); ... exit(); }'), cut and pasted.

func add(m *Map, key []Part, vs ...int64) {
	for _, v := range vs {
		m.Add(key, v)
	}
}

func TestHistText(t *testing.T) {
	m := NewMap("@h", Kind{Func: Hist})
	add(m, nil, 5, 0, 1, 1000, -3)
	want := `@h: 
(..., 0)               1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|
[0]                    1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|
[1]                    1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|
[2, 4)                 0 |                                                    |
[4, 8)                 1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|
[8, 16)                0 |                                                    |
[16, 32)               0 |                                                    |
[32, 64)               0 |                                                    |
[64, 128)              0 |                                                    |
[128, 256)             0 |                                                    |
[256, 512)             0 |                                                    |
[512, 1K)              1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|

`
	if got := string(m.AppendText(nil)); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestHistBars(t *testing.T) {
	m := NewMap("@h", Kind{Func: Hist})
	add(m, nil, 2, 3, 3, 8, 8, 8, 8, 8, 8, 8, 1048576, 1<<32)
	got := string(m.AppendText(nil))
	for _, line := range []string{
		"[2, 4)                 3 |@@@@@@@@@@@@@@@@@@@@@@                              |\n",
		"[8, 16)                7 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n",
		"[512K, 1M)             0 |                                                    |\n",
		"[1M, 2M)               1 |@@@@@@@                                             |\n",
		// bpftrace puts 2^32 in [2G, 4G) (its in-kernel log2 is off
		// at 2^32 and above); 2^32 is in [4G, 8G).
		"[4G, 8G)               1 |@@@@@@@                                             |\n\n",
	} {
		if !strings.Contains(got, line) {
			t.Errorf("no line %q in\n%s", line, got)
		}
	}
	if n := strings.Count(got, "\n"); n != 34 {
		t.Errorf("%d lines, want 34 (header, [2, 4) to [4G, 8G), blank):\n%s", n, got)
	}
}

func TestLHistText(t *testing.T) {
	k := Kind{Func: LHist, Min: 0, Max: 4096, Step: 1024}
	if err := k.Check(); err != nil {
		t.Fatal(err)
	}
	m := NewMap("@l", k)
	add(m, nil, 2048, -5)
	want := `@l: 
(..., 0)               1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|
[0, 1K)                0 |                                                    |
[1K, 2K)               0 |                                                    |
[2K, 3K)               1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|

`
	if got := string(m.AppendText(nil)); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	m = NewMap("@l", Kind{Func: LHist, Min: 0, Max: 100, Step: 10})
	add(m, nil, 5, 200, -1)
	got := string(m.AppendText(nil))
	for _, line := range []string{"(..., 0)               1 |", "[0, 10)                1 |", "[90, 100)              0 |", "[100, ...)             1 |"} {
		if !strings.Contains(got, line) {
			t.Errorf("no line %q in\n%s", line, got)
		}
	}
}

func TestLHistCheck(t *testing.T) {
	for _, k := range []Kind{
		{Func: LHist, Min: 5, Max: 20, Step: 4},
		{Func: LHist, Min: 0, Max: 10, Step: 0},
		{Func: LHist, Min: 10, Max: 10, Step: 1},
		{Func: LHist, Min: 0, Max: 1 << 20, Step: 1},
	} {
		if err := k.Check(); err == nil {
			t.Errorf("%+v: no error", k)
		}
	}
}

func TestScalarText(t *testing.T) {
	c := NewMap("@m", Kind{Func: Count})
	for _, k := range []int64{1, 2, 2, 0, 0} {
		c.Add([]Part{{Text: itoa(k), Int: k, IsInt: true}}, 0)
	}
	s := NewMap("@s", Kind{Func: Stats})
	add(s, nil, 3, 8)
	a := NewMap("@a", Kind{Func: Avg})
	add(a, nil, 3, 4)
	mn := NewMap("@min", Kind{Func: Min})
	add(mn, []Part{{Text: "x"}, {Stack: []string{"leaf+4", "main+20"}}}, 7, -2, 5)
	none := NewMap("@n", Kind{Func: Count})
	var b []byte
	for _, m := range []*Map{c, s, a, mn, none} {
		b = m.AppendText(b)
	}
	want := `@m[1]: 1
@m[0]: 2
@m[2]: 2
@s: count 2, average 5, total 11

@a: 3

@min[x, 
    leaf+4
    main+20
]: -2
@n: 0
`
	if string(b) != want {
		t.Errorf("got\n%s\nwant\n%s", b, want)
	}
}

func TestJSON(t *testing.T) {
	h := NewMap("@h", Kind{Func: Hist})
	add(h, nil, -2, 0, 5)
	c := NewMap("@c", Kind{Func: Count})
	c.Add([]Part{{Text: "1", Int: 1, IsInt: true}, {Text: "a"}}, 0)
	s := NewMap("@s", Kind{Func: Stats})
	s.Add([]Part{{Text: "3", Int: 3, IsInt: true}}, 4)
	l := NewMap("@l", Kind{Func: LHist, Min: 5, Max: 20, Step: 5})
	l.Add(nil, 100)
	var b []byte
	for _, m := range []*Map{h, c, s, l} {
		b = m.AppendJSON(b)
	}
	want := `{"type": "hist", "data": {"@h": [{"max": -1, "count": 1}, {"min": 0, "max": 0, "count": 1}, {"min": 1, "max": 1, "count": 0}, {"min": 2, "max": 3, "count": 0}, {"min": 4, "max": 7, "count": 1}]}}
{"type": "map", "data": {"@c": {"1,a": 1}}}
{"type": "stats", "data": {"@s": {"3": {"count": 1, "average": 4, "total": 4}}}}
{"type": "hist", "data": {"@l": [{"min": 20, "count": 1}]}}
`
	if string(b) != want {
		t.Errorf("got\n%s\nwant\n%s", b, want)
	}
}

// TestMerge: partial aggregates (what an engine could hand back per key)
// merge to what adding every value gives.
func TestMerge(t *testing.T) {
	for _, k := range []Kind{{Func: Hist}, {Func: LHist, Min: 0, Max: 100, Step: 10}, {Func: Stats}, {Func: Min}, {Func: Max}} {
		whole, parts := NewMap("@w", k), NewMap("@p", k)
		key := []Part{{Text: "k"}}
		vals := []int64{7, -3, 150, 42, 0, 99}
		add(whole, key, vals...)
		for _, half := range [][]int64{vals[:2], vals[2:]} {
			var s State
			for _, v := range half {
				k.Add(&s, v)
			}
			parts.Merge(key, s)
		}
		if w, p := whole.Entries()[0].State, parts.Entries()[0].State; w.Count != p.Count || w.Sum != p.Sum || w.Min != p.Min || w.Max != p.Max || string(whole.AppendText(nil)[2:]) != string(parts.AppendText(nil)[2:]) {
			t.Errorf("%s: merged %+v, added %+v", k.Func, p, w)
		}
	}
}

func itoa(v int64) string { return strings.TrimSpace(number(v)) }
