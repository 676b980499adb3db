package probe

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// fetchWant is a fetch as its printed expression and format.
type fetchWant struct {
	expr   string
	format Format
}

var parseTests = []struct {
	text    string
	kind    Kind
	object  string
	symbol  string
	offset  uint64
	address uint64
	fetches []fetchWant
	cond    string
}{
	{text: "work", symbol: "work"},
	{text: "libc:malloc(arg1)", object: "libc", symbol: "malloc", fetches: []fetchWant{{"arg1", 0}}},
	{text: "return:work", kind: Return, symbol: "work"},
	{text: "work%return", kind: Return, symbol: "work"},
	{text: "uretprobe:/bin/bash:readline", kind: Return, object: "/bin/bash", symbol: "readline"},
	{text: "work+0x4", symbol: "work", offset: 4},
	{text: "work+12", symbol: "work", offset: 12},
	{text: "libc:str*", object: "libc", symbol: "str*"},
	{text: "work(a, b) if a*2 + b > 10", symbol: "work",
		fetches: []fetchWant{{"a", 0}, {"b", 0}}, cond: "(((a * 2) + b) > 10)"},
	{text: `libc:open(str(arg1):s, arg2:x) if str(arg1) == "/etc/passwd"`, object: "libc", symbol: "open",
		fetches: []fetchWant{{"str(arg1)", 's'}, {"arg2", 'x'}}, cond: `(str(arg1) == "/etc/passwd")`},
	{text: "entry:work", symbol: "work"},
	{text: "uprobe:/usr/lib/x86_64-linux-gnu/libc.so.6:malloc", object: "/usr/lib/x86_64-linux-gnu/libc.so.6", symbol: "malloc"},
	{text: "/path/bin:0x401136", object: "/path/bin", address: 0x401136},
	{text: "0x401136", address: 0x401136},
	{text: "libc:malloc@plt", object: "libc", symbol: "malloc@plt"},
	// C++ and Rust names: "::" qualifies, it does not separate.
	{text: "app::Server::handle(x)", symbol: "app::Server::handle", fetches: []fetchWant{{"x", 0}}},
	{text: "return:libapp:app::Server::~Server", kind: Return, object: "libapp", symbol: "app::Server::~Server"},
	{text: "./a:std::vector<int>::push_back+4", object: "./a", symbol: "std::vector<int>::push_back", offset: 4},
	{text: "app::*", symbol: "app::*"},
	{text: "work(arg1:x, *(u32*)(arg2+8), (s8)arg3)", symbol: "work",
		fetches: []fetchWant{{"arg1", 'x'}, {"(*(u32*)(arg2 + 8))", 0}, {"((s8)arg3)", 0}}},
	{text: "work if pid == 42 && tid != 0", symbol: "work", cond: "((pid == 42) && (tid != 0))"},
	{text: "return:work(ret) if ret < 0", kind: Return, symbol: "work", fetches: []fetchWant{{"ret", 0}}, cond: "(ret < 0)"},
	// beyond the brief's examples
	{text: "  work  ", symbol: "work"},
	{text: "work()", symbol: "work"},
	{text: "work(arg1:s)", symbol: "work", fetches: []fetchWant{{"str(arg1)", 's'}}},
	{text: "work(arg16:u, arg7:p, arg1:d)", symbol: "work",
		fetches: []fetchWant{{"arg16", 'u'}, {"arg7", 'p'}, {"arg1", 'd'}}},
	{text: "main.(*T).Work(arg1)", symbol: "main.(*T).Work", fetches: []fetchWant{{"arg1", 0}}},
	{text: "github.com/x/y.F[...]", symbol: "github.com/x/y.F[...]"},
	{text: "libc:mem[cs]*", object: "libc", symbol: "mem[cs]*"},
	{text: "memcpy@@GLIBC_2.14", symbol: "memcpy@@GLIBC_2.14"},
	{text: "./prog:work%return", kind: Return, object: "./prog", symbol: "work"},
	{text: "return:libc:0x1000", kind: Return, object: "libc", address: 0x1000},
	{text: "entry:return:x", object: "return", symbol: "x"},
	{text: "return", symbol: "return"},
	{text: "work if 'a' == *(u8*)arg1", symbol: "work", cond: "(97 == (*(u8*)arg1))"},
	{text: "work if arg1 ? arg2 : arg3", symbol: "work", cond: "(arg1 ? arg2 : arg3)"},
	{text: "work if -1 << 3 >> 1 | 0x10 & 7 ^ ~0 % 010", symbol: "work",
		cond: "((((-1) << 3) >> 1) | ((16 & 7) ^ ((~0) % 8)))"},
	{text: "work if a || b && !c", symbol: "work", cond: "(a || (b && (!c)))"},
	{text: "work if 1 ? 2 : 3 ? 4 : 5", symbol: "work", cond: "(1 ? 2 : (3 ? 4 : 5))"},
	{text: "work if 0xffffffffffffffff == -1", symbol: "work", cond: "(18446744073709551615 == (-1))"},
	{text: `work if str(arg1) != "a\"b\n"`, symbol: "work", cond: `(str(arg1) != "a\"b\n")`},
	{text: "work if str(arg1) == str(arg2)", symbol: "work", cond: "(str(arg1) == str(arg2))"},
	{text: "work(x)if x", symbol: "work", fetches: []fetchWant{{"x", 0}}, cond: "x"},
}

func TestParse(t *testing.T) {
	for _, tt := range parseTests {
		s, err := Parse(tt.text)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.text, err)
			continue
		}
		if s.Text != tt.text || s.Kind != tt.kind || s.Object != tt.object || s.Symbol != tt.symbol ||
			s.Offset != tt.offset || s.Address != tt.address {
			t.Errorf("Parse(%q) = text %q kind %v object %q symbol %q offset %#x address %#x, want %q %v %q %q %#x %#x",
				tt.text, s.Text, s.Kind, s.Object, s.Symbol, s.Offset, s.Address,
				tt.text, tt.kind, tt.object, tt.symbol, tt.offset, tt.address)
		}
		var got []fetchWant
		for _, f := range s.Fetches {
			got = append(got, fetchWant{f.Expr.String(), f.Format})
		}
		if !reflect.DeepEqual(got, tt.fetches) {
			t.Errorf("Parse(%q).Fetches = %v, want %v", tt.text, got, tt.fetches)
		}
		cond := ""
		if s.Cond != nil {
			cond = s.Cond.String()
		}
		if cond != tt.cond {
			t.Errorf("Parse(%q).Cond = %s, want %s", tt.text, cond, tt.cond)
		}
	}
}

func TestParseFetchText(t *testing.T) {
	s, err := Parse("work( arg1:x , *(u32*)(arg2+8) ,(s8)arg3)")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"arg1:x", "*(u32*)(arg2+8)", "(s8)arg3"}
	for i, f := range s.Fetches {
		if f.Text != want[i] {
			t.Errorf("fetch %d Text = %q, want %q", i, f.Text, want[i])
		}
	}
}

// TestParseTypes checks the typed IR: result types of operators, casts,
// dereferences and string forms.
func TestParseTypes(t *testing.T) {
	for _, tt := range []struct {
		expr string
		want Type
	}{
		{"1", S64},
		{"0xffffffffffffffff", U64},
		{"arg1", U64},
		{"pid", S64},
		{"1 + 2", S64},
		{"arg1 + 2", U64},
		{"(s32)arg1 * (s8)arg2", S64},
		{"(s32)arg1 * (u8)arg2", U64},
		{"arg1 < 2", S64},
		{"arg1 && arg2", S64},
		{"-1 >> arg1", S64},
		{"arg1 >> -1", U64},
		{"(u16)arg1", U16},
		{"(long)arg1", S64},
		{"(int)arg1", S32},
		{"*(uint8_t*)arg1", U8},
		{"(size_t)-1", U64},
		{"-(u16)arg1", U16},
		{"!(u16)arg1", S64},
		{"*(s16*)arg1", S16},
		{"*arg1", U64},
		{"*(arg1 + 8)", U64},
		{"arg1 ? 1 : 2", S64},
		{"arg1 ? arg2 : 2", U64},
		{"str(arg1)", Str},
		{`str(arg1) == "x"`, S64},
	} {
		s, err := Parse("work(" + tt.expr + ")")
		if err != nil {
			t.Errorf("%s: %v", tt.expr, err)
			continue
		}
		if got := s.Fetches[0].Expr.Type(); got != tt.want {
			t.Errorf("type of %s = %v, want %v", tt.expr, got, tt.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, tt := range []struct {
		text string
		col  int
		msg  string // substring of the message
	}{
		{"work(a,", 8, "unexpected end of spec, want an expression"},
		{"", 1, "empty spec"},
		{"   ", 4, "empty spec"},
		{"(arg1)", 1, "want a location"},
		{"work(a b)", 8, `unexpected "b", want ',' or ')'`},
		{"work(arg0)", 6, "arg1..arg16"},
		{"work(arg17)", 6, "arg1..arg16"},
		{"work(arg99)", 6, "arg1..arg16"},
		{"work(arg1:q)", 11, `unknown format "q"`},
		{"work(arg1:)", 11, "want a format letter"},
		{"work(arg1:xx)", 11, `unknown format "xx"`},
		{`work if str(arg1) == "abc`, 22, "unterminated string literal"},
		{`work if 'a == 1`, 9, "unterminated character literal"},
		{`work if "\q" == str(arg1)`, 9, "invalid string literal"},
		{"work((arg1)", 12, "want ',' or ')'"},
		{"work(arg1", 10, "want ',' or ')'"},
		{"work if (arg1", 14, "want ')' to close the '(' at column 9"},
		{"work if arg1)", 13, `unexpected ")"`},
		{"work(arg1) junk", 12, `unexpected "junk"`},
		{"work junk", 6, "no spaces inside a location"},
		{"work +4", 6, `unexpected "+"`},
		{"work if ret", 9, "only available in return probes"},
		{"work(ret)", 6, "only available in return probes"},
		{"work if 99999999999999999999 > 1", 9, "overflows 64 bits"},
		{"work if 08 > 1", 9, "malformed integer literal 08"},
		{"work if 12ab", 9, "malformed integer literal 12ab"},
		{`work if "a" == 1`, 13, "cannot compare string"},
		{`work if "a" == "b"`, 13, "two string literals"},
		{`work if "a"`, 9, "string literal"},
		{`work if str(arg1)`, 9, "is a string, not an integer"},
		{`work if str(arg1) + 1 > 0`, 9, "is a string"},
		{`work if str(arg1) < "a"`, 9, "is a string"},
		{`work(str(arg1):x)`, 16, "format x needs an integer"},
		{`work("abc")`, 6, "cannot be fetched"},
		{`work("abc":s)`, 6, "cannot be fetched"},
		{`work(str("a"))`, 10, "string literal"},
		{`work(str arg1)`, 10, "want '(' after str"},
		{`work((u32)str(arg1))`, 11, "is a string"},
		{`work(-str(arg1))`, 7, "is a string"},
		{`work(arg1 ? str(arg1) : 0)`, 13, "is a string"},
		{"work(u32)", 6, "u32 is a type"},
		{"work if", 8, "want a condition"},
		{"work if if", 9, `unexpected "if"`},
		{"work(arg1 +)", 12, `unexpected ")", want an expression`},
		{"work(arg1 +", 12, `want an expression after "+"`},
		{"work(arg1 ? 1)", 14, "':' of the ?: operator"},
		{"work if arg1 $ 2", 14, `unexpected character "$"`},
		{"return:work+4", 12, "takes no offset"},
		{"work+4%return", 5, "takes no offset"},
		{"work%return+4", 5, `unexpected "%" in function name`},
		{"entry:work%return", 11, "contradicts"},
		{"work+", 6, "bad offset"},
		{"work+0xz", 6, "bad offset"},
		{"work+99999999999999999999", 6, "bad offset"},
		{"+4", 1, "missing function name"},
		{"libc:", 6, "missing function name"},
		{"return:", 8, "missing function name"},
		{":work", 1, "empty object name"},
		{"a:b:c", 4, "too many ':'"},
		{"uprobe:a:b:c", 11, "too many ':'"},
		{"123", 1, "starts with a digit"},
		{"0x", 1, "bad address"},
		{"0x0", 1, "address 0"},
		{"0x10000000000000000", 1, "bad address"},
		{"0x1000+4", 1, "takes no offset"},
		{"wo%rk", 3, `unexpected "%"`},
		{"work[abc", 9, `unclosed "["`},
		{"work]", 5, `unbalanced "]"`},
		{"work[a b]", 7, `unclosed "["`},
		{"work(" + strings.Repeat("(", 70) + "1" + strings.Repeat(")", 70) + ")", 70, "nested too deeply"},
		{"work(" + strings.Repeat("-", 70) + "1)", 69, "nested too deeply"},
		{"work(1" + strings.Repeat("+1", 70) + ")", 6, "nested too deeply"},
		{`work if str(arg1) == "` + strings.Repeat("x", 257) + `"`, 22, "longer than 256 bytes"},
	} {
		_, err := Parse(tt.text)
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("Parse(%q) error = %v, want a *ParseError", tt.text, err)
			continue
		}
		if !errors.Is(err, ErrSyntax) {
			t.Errorf("Parse(%q) error does not wrap ErrSyntax", tt.text)
		}
		if pe.Col != tt.col || !strings.Contains(pe.Msg, tt.msg) || pe.Text != tt.text {
			t.Errorf("Parse(%q) = %v (col %d, token %q), want column %d and %q", tt.text, err, pe.Col, pe.Token, tt.col, tt.msg)
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("Parse(%q) error spans lines: %q", tt.text, err)
		}
	}
}

func TestParseErrorString(t *testing.T) {
	_, err := Parse("work(a,")
	want := `spec "work(a," column 8: unexpected end of spec, want an expression`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %s", err, want)
	}
	_, err = Parse("work(a b)")
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Token != "b" {
		t.Errorf("token of %v = %q, want \"b\"", err, pe.Token)
	}
}

// TestRoundTrip checks that printing a spec and re-parsing it gives the
// same spec: the same canonical string and equal expression trees.
func TestRoundTrip(t *testing.T) {
	for _, tt := range parseTests {
		checkRoundTrip(t, tt.text)
	}
}

func checkRoundTrip(t *testing.T, text string) {
	t.Helper()
	s1, err := Parse(text)
	if err != nil {
		return
	}
	c1 := s1.String()
	s2, err := Parse(c1)
	if err != nil {
		t.Fatalf("Parse(%q) ok, but its canonical form %q fails: %v", text, c1, err)
	}
	if c2 := s2.String(); c1 != c2 {
		t.Fatalf("canonical form of %q is %q, which re-prints as %q", text, c1, c2)
	}
	s2.Text = s1.Text
	if s1.Agg != nil && s2.Agg != nil {
		s2.Agg.Bpftrace, s2.Agg.ShiftedArgs = s1.Agg.Bpftrace, s1.Agg.ShiftedArgs
	}
	for i := range s2.Fetches {
		s2.Fetches[i].Text = s1.Fetches[i].Text
	}
	if !reflect.DeepEqual(s1, s2) {
		t.Fatalf("Parse(%q) and Parse(%q) differ:\n%#v\n%#v", text, c1, s1, s2)
	}
}

func TestCutObject(t *testing.T) {
	for _, tt := range []struct{ in, obj, sym string }{
		{"libc:malloc", "libc", "malloc"},
		{"malloc", "", "malloc"},
		{"app::Server::handle", "", "app::Server::handle"},
		{"libapp:app::Server::handle", "libapp", "app::Server::handle"},
		{"/opt/x.so:ns::f*", "/opt/x.so", "ns::f*"},
	} {
		obj, sym, ok := CutObject(tt.in)
		if obj != tt.obj || sym != tt.sym || ok != (tt.obj != "") {
			t.Errorf("CutObject(%q) = %q, %q, %v", tt.in, obj, sym, ok)
		}
	}
}
