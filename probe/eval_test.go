package probe

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
)

// memEnv is an Env over fixed arguments and a few readable regions.
type memEnv struct {
	args     []uint64
	pid, tid uint64
	ret      uint64
	regions  map[uint64][]byte // base address → contents
	regs     map[string]uint64
}

func (m *memEnv) Reg(name string) (uint64, error) {
	v, ok := m.regs[name]
	if !ok {
		return 0, fmt.Errorf("register %s not supported", name)
	}
	return v, nil
}

func (m *memEnv) Arg(n int) (uint64, error) {
	if n > len(m.args) {
		return 0, fmt.Errorf("stack argument %d unreadable", n)
	}
	return m.args[n-1], nil
}

func (m *memEnv) Builtin(b Builtin) uint64 {
	switch b {
	case BuiltinPID:
		return m.pid
	case BuiltinTID:
		return m.tid
	}
	return m.ret
}

func (m *memEnv) Read(addr uint64, p []byte) error {
	for base, b := range m.regions {
		if addr >= base && addr-base <= uint64(len(b)) && uint64(len(p)) <= uint64(len(b))-(addr-base) {
			copy(p, b[addr-base:])
			return nil
		}
	}
	return errors.New("EFAULT")
}

// page is a region that ends exactly at a page boundary, so reads past
// its end fault.
const pageEnd = 0x20000

func testEnv() *memEnv {
	tail := make([]byte, 16)
	copy(tail, "edge\x00")
	copy(tail[10:], "cut!!!")
	long := make([]byte, 300)
	for i := range long {
		long[i] = 'a'
	}
	return &memEnv{
		args: []uint64{5, 7, 0x1000, math.MaxUint64, 0x1008, pageEnd - 16, 0x3000, pageEnd - 6},
		pid:  42, tid: 43, ret: math.MaxUint64, // ret = -1
		regions: map[uint64][]byte{
			0x1000:       page("/etc/passwd\x00\xfe\xff\xff\xff\x80\x00\x00\x00"),
			pageEnd - 16: tail,
			0x3000:       long,
		},
	}
}

func TestEval(t *testing.T) {
	env := testEnv()
	for _, tt := range []struct {
		expr string
		want uint64 // as uint64; signed results compare by bits
	}{
		{"arg1", 5},
		{"2*arg1 + 3*arg2", 31},
		{"arg1 - arg2", math.MaxUint64 - 1},
		{"arg1 / 0", 0},
		{"arg1 % 0", 0},
		{"-7 / 2", u(-3)},
		{"-7 % 2", u(-1)},
		{"arg4 / 2", math.MaxUint64 / 2}, // unsigned
		{"(s64)arg4 / 2", 0},             // signed: -1/2
		{"(-9223372036854775807 - 1) / -1", u(math.MinInt64)},
		{"(-9223372036854775807 - 1) % -1", 0},
		{"1 << 64", 1},
		{"1 << 65", 2},
		{"1 << -1", 1 << 63},
		{"-16 >> 2", u(-4)},
		{"arg4 >> 60", 15},
		{"(s8)arg4 >> 1", u(-1)},
		{"(u8)-1", 255},
		{"(s8)255", u(-1)},
		{"(s16)0x18000", u(-32768)},
		{"(u32)-1", 0xffffffff},
		{"(s32)0x80000000", u(math.MinInt32)},
		{"-(u8)1", 255},
		{"~(u16)0", 0xffff},
		{"!arg1", 0},
		{"!!arg1", 1},
		{"arg4 > 0", 1},      // unsigned compare
		{"(s64)arg4 > 0", 0}, // signed
		{"-1 < 0", 1},
		{"-1 < arg1", 0}, // mixed: unsigned
		{"ret < 0", 1},
		{"ret == -1", 1},
		{"arg1 <= 5 && arg1 >= 5", 1},
		{"arg1 != 5 || arg2 == 7", 1},
		{"arg1 ? arg2 : arg3", 7},
		{"0 ? arg2 : -1", u(-1)},
		{"pid * 1000 + tid", 42043},
		{"(3 & 6) | (1 ^ 8)", 11},
		{"*(u8*)arg3", '/'},
		{"*(u16*)arg3", 'e'<<8 | '/'},
		{"*(u32*)(arg3 + 12)", 0xfffffffe},
		{"*(s32*)(arg3 + 12)", u(-2)},
		{"*(s8*)(arg3 + 16)", u(-128)},
		{"*(u64*)(arg3 + 12)", 0x80fffffffe},
		{"*(arg3 + 12)", 0x80fffffffe},
		{`str(arg3) == "/etc/passwd"`, 1},
		{`str(arg3) == "/etc/passw"`, 0},
		{`str(arg3) != "/etc/passwd"`, 0},
		{`str(arg3 + 5) == "passwd"`, 1},
		{`"passwd" == str(arg5 - 3)`, 1},
		{`str(arg6) == "edge"`, 1}, // ends just before an unmapped page
		{`str(arg3) == str(arg3)`, 1},
		{`str(arg7) == str(arg7 + 1)`, 1}, // both truncated to 256 bytes of 'a'
		{`str(arg7) == "` + strings.Repeat("a", MaxStrLen) + `"`, 1},
		{`str(arg7) == "` + strings.Repeat("a", MaxStrLen-1) + `"`, 0},
		{`str(arg8) == "cu"`, 0}, // reads "cut", not as far as the unmapped page
		{`str(arg8) != "cu"`, 1},
		{"0 && *(u8*)0", 0}, // short-circuit: no fault
		{"1 || *(u8*)0", 1},
		{"1 ? 2 : *(u8*)0", 2},
	} {
		s, err := Parse("return:work(" + tt.expr + ")")
		if err != nil {
			t.Errorf("%s: %v", tt.expr, err)
			continue
		}
		e := s.Fetches[0].Expr
		v, err := Eval(e, env)
		if err != nil || v.Int != tt.want || v.Signed != e.Type().Signed {
			t.Errorf("Eval(%s) = %#x signed %v, %v; want %#x (%d)", e, v.Int, v.Signed, err, tt.want, int64(tt.want))
		}
	}
}

// page returns a page holding s.
func page(s string) []byte {
	p := make([]byte, 4096)
	copy(p, s)
	return p
}

func u(v int64) uint64 { return uint64(v) }

func TestEvalFaults(t *testing.T) {
	env := testEnv()
	for _, expr := range []string{
		"*(u8*)0",
		fmt.Sprintf("*(u32*)(%d - 2)", pageEnd),
		"*(u64*)(arg6 + 12)",
		"arg9",
		"arg1 + arg12",
		`str(0) == "x"`,
		`str(arg8 + 6) == "x"`,
		`str(arg8) == "cut!!!"`, // no NUL before the unmapped page
		"1 && *(u8*)8",
		"*(u8*)8 || 1",
	} {
		s, err := Parse("work(" + expr + ")")
		if err != nil {
			t.Fatal(err)
		}
		e := s.Fetches[0].Expr
		if _, err := Eval(e, env); !errors.Is(err, ErrFault) {
			t.Errorf("Eval(%s) error = %v, want ErrFault", e, err)
		}
		if EvalCond(e, env) {
			t.Errorf("EvalCond(%s) = true on a fault", e)
		}
		if v := FetchValue(s.Fetches[0], env); !v.Err {
			t.Errorf("FetchValue(%s) = %+v, want Err", e, v)
		}
	}
}

func TestFetchValue(t *testing.T) {
	env := testEnv()
	s, err := Parse(`return:work(arg1, ret, arg3:s, str(arg3 + 5), arg2:x, str(arg7), (u8)ret:d)`)
	if err != nil {
		t.Fatal(err)
	}
	want := []Value{
		{Int: 5},
		{Int: math.MaxUint64, Signed: true},
		{Str: "/etc/passwd", IsStr: true, Format: FormatString},
		{Str: "passwd", IsStr: true},
		{Int: 7, Format: FormatHex},
		{Str: strings.Repeat("a", MaxStrLen), IsStr: true},
		{Int: 255, Format: FormatDec},
	}
	for i, f := range s.Fetches {
		if got := FetchValue(f, env); got != want[i] {
			t.Errorf("FetchValue(%s) = %+v, want %+v", f, got, want[i])
		}
	}
}

func TestEvalCond(t *testing.T) {
	env := testEnv()
	if !EvalCond(nil, env) {
		t.Error("EvalCond(nil) = false, want true")
	}
	for cond, want := range map[string]bool{
		"pid == 42 && tid != 0":      true,
		"pid == 41":                  false,
		`str(arg3) == "/etc/passwd"`: true,
		"arg1 * 2 + arg2 > 16":       true,
		"arg1 * 2 + arg2 > 17":       false,
	} {
		s, err := Parse("work if " + cond)
		if err != nil {
			t.Fatal(err)
		}
		if got := EvalCond(s.Cond, env); got != want {
			t.Errorf("EvalCond(%s) = %v, want %v", cond, got, want)
		}
	}
}

func TestEvalUnbound(t *testing.T) {
	s, err := Parse("work if a > 1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Eval(s.Cond, testEnv()); err == nil {
		t.Error("Eval of an unbound name succeeded")
	}
}

func BenchmarkEval(b *testing.B) {
	s, err := Parse("work if 2*arg1 + 3*arg2 > 0")
	if err != nil {
		b.Fatal(err)
	}
	env := &memEnv{args: []uint64{5, 7}}
	b.ReportAllocs()
	for b.Loop() {
		if !EvalCond(s.Cond, env) {
			b.Fatal("false")
		}
	}
}

func BenchmarkEvalStrCompare(b *testing.B) {
	s, err := Parse(`work if str(arg3) == "/etc/passwd"`)
	if err != nil {
		b.Fatal(err)
	}
	env := testEnv()
	b.ReportAllocs()
	for b.Loop() {
		if !EvalCond(s.Cond, env) {
			b.Fatal("false")
		}
	}
}

// A sized string (ltrace's string[argN]) shows that many bytes, NULs
// included, capped at MaxStrLen; a NULL str() is Null. Both engines'
// compiled forms are checked against these in their own tests.
func TestEvalSizedAndNull(t *testing.T) {
	env := testEnv()
	for _, c := range []struct {
		e    *StrOf
		want string
	}{
		{&StrOf{Addr: &Arg{N: 3}, Len: &Const{Val: 13, T: U64}}, "/etc/passwd\x00\xfe"},
		{&StrOf{Addr: &Arg{N: 3}, Len: &Arg{N: 1}}, "/etc/"},
		{&StrOf{Addr: &Arg{N: 7}, Len: &Const{Val: 1000, T: U64}}, strings.Repeat("a", 256)},
	} {
		v, err := Eval(c.e, env)
		if err != nil || !v.IsStr || v.Str != c.want {
			t.Errorf("%s: %+v %v, want %q", c.e, v, err, c.want)
		}
	}
	if v := FetchValue(Fetch{Expr: &StrOf{Addr: &Const{Val: 0, T: U64}}}, env); !v.Null || v.Err || v.IsStr {
		t.Errorf("str(0): %+v, want Null", v)
	}
	if v := FetchValue(Fetch{Expr: &StrOf{Addr: &Const{Val: 0x9000, T: U64}, Len: &Const{Val: 4, T: U64}}}, env); !v.Err {
		t.Errorf("buf of unreadable memory: %+v, want Err", v)
	}
}
