package probe

import (
	"errors"
	"strings"
	"testing"
)

func TestParseUSDT(t *testing.T) {
	for _, tt := range []struct {
		text, object, provider, name, canon string
		fetches                             int
	}{
		{"usdt:python:function__entry", "", "python", "function__entry", "usdt:python:function__entry", 0},
		{"usdt:/usr/bin/python3.11:python:gc__start(arg1)", "/usr/bin/python3.11", "python", "gc__start",
			"usdt:/usr/bin/python3.11:python:gc__start(arg1)", 1},
		{"usdt:libfoo:prov:*", "libfoo", "prov", "*", "usdt:libfoo:prov:*", 0},
		{"usdt:py*:gc__[sd]*", "", "py*", "gc__[sd]*", "usdt:py*:gc__[sd]*", 0},
		{"usdt:python:function__entry(str(arg1), str(arg2), arg3) if arg3 > 10", "", "python", "function__entry",
			"usdt:python:function__entry(str(arg1), str(arg2), arg3) if (arg3 > 10)", 3},
		{"usdt:usdt:p:n()", "usdt", "p", "n", "usdt:usdt:p:n", 0},
	} {
		s, err := Parse(tt.text)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.text, err)
			continue
		}
		if s.Object != tt.object || s.Provider != tt.provider || s.Symbol != tt.name || s.Kind != Entry || len(s.Fetches) != tt.fetches {
			t.Errorf("Parse(%q) = object %q provider %q name %q kind %v %d fetches", tt.text, s.Object, s.Provider, s.Symbol, s.Kind, len(s.Fetches))
		}
		if got := s.String(); got != tt.canon {
			t.Errorf("Parse(%q).String() = %q, want %q", tt.text, got, tt.canon)
		}
		checkRoundTrip(t, tt.text)
	}
	// A library named usdt keeps working with an explicit type.
	s, err := Parse("entry:usdt:foo")
	if err != nil || s.Provider != "" || s.Object != "usdt" || s.String() != "entry:usdt:foo" {
		t.Errorf("entry:usdt:foo: %+v, %v", s, err)
	}
}

func TestParseUSDTErrors(t *testing.T) {
	for _, tt := range []struct {
		text string
		col  int
		msg  string
	}{
		{"usdt:python", 6, "want usdt:[object:]provider:name"},
		{"usdt:a:b:c:d", 12, "want usdt:[object:]provider:name"},
		{"usdt:p:n%return", 9, "has no return"},
		{"return:usdt:p:n", 7, "takes no type"},
		{"usdt:p:n+4", 9, `unexpected "+"`},
		{"usdt:p:", 8, "missing USDT probe name"},
		{"usdt:p:n(ret)", 10, "ret is only available"},
	} {
		_, err := Parse(tt.text)
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Col != tt.col || !strings.Contains(pe.Msg, tt.msg) {
			t.Errorf("Parse(%q) = %v, want column %d and %q", tt.text, err, tt.col, tt.msg)
		}
	}
}

// usdtSite is python:gc__start-like: one signed 32-bit operand on the stack.
func usdtSite(spec string) (*Site, error) {
	sp, err := Parse(spec)
	if err != nil {
		return nil, err
	}
	s := &Site{Spec: sp, Func: "python:gc__start", USDT: true,
		Args:     []Expr{&Deref{T: S32, Addr: &Binary{Op: OpAdd, X: &Reg{Name: "rsp"}, Y: &Const{Val: 112}, T: U64}}, nil},
		Operands: []string{"-4@112(%rsp)", "8@foo@GOTPCREL(%rip)"},
		ArgErrs:  []error{nil, errors.New(`operand "8@foo@GOTPCREL(%rip)": unsupported form "foo@GOTPCREL"`)},
	}
	return s, s.Bind()
}

func TestBindUSDT(t *testing.T) {
	s, err := usdtSite("usdt:python:gc__start(arg1, arg1:x) if arg1 < 0")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Fetches[0].Expr.String(); got != "(*(s32*)(%rsp + 112))" {
		t.Errorf("arg1 bound to %s", got)
	}
	// The operand is signed: arg1 < 0 compares signed.
	env := &memEnv{regs: map[string]uint64{"rsp": 0x1000}, regions: map[uint64][]byte{0x1070: {0xfe, 0xff, 0xff, 0xff}}}
	if !EvalCond(s.Cond, env) {
		t.Errorf("%s is false with arg1 = -2", s.Cond)
	}
	if v := FetchValue(s.Fetches[0], env); v.Int != uint64(1<<64-2) || !v.Signed {
		t.Errorf("arg1 = %+v, want -2 signed", v)
	}

	// No fetches: every readable operand, named argN.
	s, err = usdtSite("usdt:python:gc__start")
	if err != nil || len(s.Fetches) != 1 || s.Fetches[0].Text != "arg1" || s.Fetches[0].Expr != s.Args[0] {
		t.Errorf("all arguments: %+v, %v", s.Fetches, err)
	}

	for spec, want := range map[string]string{
		"usdt:python:gc__start(arg3)":   `no arg3: python:gc__start has 2 arguments (-4@112(%rsp) 8@foo@GOTPCREL(%rip))`,
		"usdt:python:gc__start if arg2": `arg2 of python:gc__start cannot be read: operand "8@foo@GOTPCREL(%rip)": unsupported form`,
		"usdt:python:gc__start(name)":   `"name": a USDT probe has no parameter names; python:gc__start has 2 arguments`,
	} {
		_, err := usdtSite(spec)
		if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, ErrNoParam) {
			t.Errorf("%s: error %v, want %q", spec, err, want)
		}
	}
}

func TestEvalReg(t *testing.T) {
	env := &memEnv{regs: map[string]uint64{"rax": 0xffff_ffff_8000_0102}}
	for _, tt := range []struct {
		e    Expr
		want uint64
	}{
		{&Reg{Name: "rax"}, 0xffff_ffff_8000_0102},
		{&Cast{To: S32, X: &Reg{Name: "rax"}}, 0xffff_ffff_8000_0102},
		{&Cast{To: U16, X: &Reg{Name: "rax"}}, 0x102},
		{&Cast{To: U8, X: &Binary{Op: OpShr, X: &Reg{Name: "rax"}, Y: &Const{Val: 8}, T: U64}}, 1},
	} {
		v, err := Eval(tt.e, env)
		if err != nil || v.Int != tt.want {
			t.Errorf("Eval(%s) = %#x, %v, want %#x", tt.e, v.Int, err, tt.want)
		}
	}
	if _, err := Eval(&Reg{Name: "r16"}, env); err == nil || !strings.Contains(err.Error(), "r16") {
		t.Errorf("unknown register: %v", err)
	}
}

func TestParseSyscall(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"syscall:openat", "syscall:openat"},
		{"syscall:open* if ret < 0", "syscall:open* if (ret < 0)"},
		{"syscall:%file", "syscall:%file"},
		{`syscall:openat if str(arg2) == "/etc/passwd"`, `syscall:openat if (str(arg2) == "/etc/passwd")`},
	} {
		s, err := Parse(tc.in)
		if err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		if !s.Syscall || s.Kind != Return || s.String() != tc.want {
			t.Errorf("%s: got %q syscall=%v kind=%v", tc.in, s.String(), s.Syscall, s.Kind)
		}
	}
	for _, in := range []string{"syscall:", "syscall:a:b", "syscall:read%return", "syscall:re/ad"} {
		if _, err := Parse(in); err == nil {
			t.Errorf("%s: parsed", in)
		}
	}
}
