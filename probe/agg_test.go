package probe

import (
	"errors"
	"strings"
	"testing"

	"github.com/utap/utap/internal/agg"
)

func TestParseAgg(t *testing.T) {
	for _, tt := range []struct {
		text, canon string
		fn          agg.Func
		value       string // the aggregated fetch, "" for none
		keys        []KeyKind
		fetches     int
	}{
		{"libc:malloc(arg1) => hist(arg1)", "libc:malloc => hist(arg1)", agg.Hist, "arg1", nil, 1},
		{"libc:malloc => count() by ustack", "libc:malloc => count() by ustack", agg.Count, "", []KeyKind{KeyUstack}, 0},
		{"return:libc:read => sum(ret) by pid, comm", "return:libc:read => sum(ret) by pid, comm", agg.Sum, "ret", []KeyKind{KeyPID, KeyComm}, 1},
		{"work if arg1 > 5 => avg(arg2) by arg1", "work if (arg1 > 5) => avg(arg2) by arg1", agg.Avg, "arg2", []KeyKind{KeyExpr}, 2},
		{"work => @sizes = lhist(arg2, -10, 100, 10) by tid, arg1:x, ustack(4)", "work => @sizes = lhist(arg2, -10, 100, 10) by tid, arg1:x, ustack(4)", agg.LHist, "arg2", []KeyKind{KeyTID, KeyExpr, KeyUstack}, 2},
		{"work(a) => stats(a*2) by func, str(arg2)", "work => stats((a * 2)) by func, str(arg2)", agg.Stats, "(a * 2)", []KeyKind{KeyFunc, KeyExpr}, 2},
		{"syscall:read => max(ret) by (pid)", "syscall:read => max(ret) by pid", agg.Max, "ret", []KeyKind{KeyPID}, 1},
		{"work=>@=min(arg1)", "work => @ = min(arg1)", agg.Min, "arg1", nil, 1},
		// bpftrace one-liners: arg0 is utap's arg1
		{"uprobe:libc:malloc { @[ustack] = count(); }", "libc:malloc => @ = count() by ustack", agg.Count, "", []KeyKind{KeyUstack}, 0},
		{"libc:malloc { @bytes = hist(arg0); }", "libc:malloc => @bytes = hist(arg1)", agg.Hist, "arg1", nil, 1},
		{"uretprobe:libc:read /arg0 > 2/ { @r[comm, pid] = stats(retval) }", "return:libc:read if (arg1 > 2) => @r = stats(ret) by comm, pid", agg.Stats, "ret", []KeyKind{KeyComm, KeyPID}, 1},
		{`u:/bin/bash:readline{@x[str(arg0)]=count();;}`, "/bin/bash:readline => @x = count() by str(arg1)", agg.Count, "", []KeyKind{KeyExpr}, 1},
	} {
		s, err := Parse(tt.text)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.text, err)
			continue
		}
		a := s.Agg
		if a == nil {
			t.Errorf("Parse(%q): no aggregation", tt.text)
			continue
		}
		if got := s.String(); got != tt.canon {
			t.Errorf("Parse(%q).String() = %q, want %q", tt.text, got, tt.canon)
		}
		if s.Text != tt.text {
			t.Errorf("Parse(%q).Text = %q", tt.text, s.Text)
		}
		if a.Kind.Func != tt.fn || len(s.Fetches) != tt.fetches {
			t.Errorf("Parse(%q): %s with %d fetches, want %s with %d", tt.text, a.Kind.Func, len(s.Fetches), tt.fn, tt.fetches)
		}
		if (tt.value == "") != (a.Value < 0) || a.Value >= 0 && s.Fetches[a.Value].Expr.String() != tt.value {
			t.Errorf("Parse(%q): value %d, want %q", tt.text, a.Value, tt.value)
		}
		var kinds []KeyKind
		for _, k := range a.Keys {
			kinds = append(kinds, k.Kind)
		}
		if !slicesEqual(kinds, tt.keys) {
			t.Errorf("Parse(%q): keys %v, want %v", tt.text, kinds, tt.keys)
		}
		if bt := strings.Contains(tt.text, "{"); a.Bpftrace != bt || a.ShiftedArgs != (bt && strings.Contains(tt.text, "arg0") || strings.Contains(tt.text, "retval")) {
			t.Errorf("Parse(%q): Bpftrace %v, ShiftedArgs %v", tt.text, a.Bpftrace, a.ShiftedArgs)
		}
		checkRoundTrip(t, tt.text)
	}
	if s, _ := Parse("work => hist(arg1) by ustack(3)"); s.Agg.Keys[0].Depth != 3 {
		t.Errorf("ustack(3): depth %d", s.Agg.Keys[0].Depth)
	}
	if s, _ := Parse("work => lhist(arg1, -10, 100, 10)"); s.Agg.Kind != (agg.Kind{Func: agg.LHist, Min: -10, Max: 100, Step: 10}) {
		t.Errorf("lhist kind %+v", s.Agg.Kind)
	}
}

func slicesEqual[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestParseAggErrors: one line naming the column and what was wanted.
func TestParseAggErrors(t *testing.T) {
	for _, tt := range []struct {
		text string
		col  int
		msg  string
	}{
		{"work =>", 8, "want an aggregation: count(), sum(x)"},
		{"work => hst(arg1)", 9, `unknown aggregation "hst"`},
		{"work => hist()", 14, "want the value to aggregate, e.g. hist(arg1)"},
		{"work => count(arg1)", 15, "count() takes no value"},
		{"work => sum(str(arg1))", 13, "is a string"},
		{"work => lhist(arg1, 0, 100)", 27, "lhist's min, max and step"},
		{"work => lhist(arg1, 0, 100, 7)", 9, "want max - min a multiple of step"},
		{"work => lhist(arg1, 0, 100, 0)", 9, "want a step above 0"},
		{"work => count() by", 19, "want a key after 'by'"},
		{"work => count() by arg1 arg2", 25, "want 'by' and keys, or the end"},
		{"work => count() by ustack(0)", 20, "ustack(0): give 1 to 127 frames"},
		{"work => @x count()", 12, "'=' after the map name @x"},
		{"work => sum(ret)", 13, "ret is only available in return probes"},
		{"work if arg1 = 2", 14, `unexpected "=", want 'if', '=>' or the end`},
		{"libc:malloc { @a = count(); @b = hist(arg0); }", 13, "takes one statement"},
		{`libc:malloc { printf("%d\n", arg0); }`, 13, "takes one statement"},
		{"libc:malloc arg0 > 5 { @ = count(); }", 13, "want a bpftrace predicate /condition/"},
		{"libc:malloc { @ == count(); }", 13, "takes one statement"},
	} {
		_, err := Parse(tt.text)
		var pe *ParseError
		if !errors.As(err, &pe) || !errors.Is(err, ErrSyntax) {
			t.Errorf("Parse(%q) error = %v, want a *ParseError", tt.text, err)
			continue
		}
		if pe.Col != tt.col || !strings.Contains(pe.Msg, tt.msg) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Parse(%q) = %v (col %d), want column %d and %q", tt.text, err, pe.Col, tt.col, tt.msg)
		}
	}
}
