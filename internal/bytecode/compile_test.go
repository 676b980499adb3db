package bytecode

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/utap/utap/probe"
)

// TestTable checks parsed expressions against known values and the
// reference, at one hit over the arena.
func TestTable(t *testing.T) {
	a := testArena(t)
	passwd := a.sites[3] // "/etc/passwd"
	env := &testEnv{a: a, regs: [6]uint64{5, 7, passwd, math.MaxUint64, a.sites[7], a.guard - 12}, sp: a.ptrs[0], ret: math.MaxUint64, pid: 42, tid: 43}
	u := func(v int64) uint64 { return uint64(v) }
	for _, tt := range []struct {
		expr  string
		want  uint64
		fault bool
	}{
		{expr: "2*arg1 + 3*arg2", want: 31},
		{expr: "arg1 - arg2", want: math.MaxUint64 - 1},
		{expr: "arg1 / 0", want: 0},
		{expr: "arg1 % 0", want: 0},
		{expr: "-7 / 2", want: u(-3)},
		{expr: "-7 % 2", want: u(-1)},
		{expr: "arg4 / 2", want: math.MaxUint64 / 2},
		{expr: "(s64)arg4 / 2", want: 0},
		{expr: "(s64)arg4 / 4", want: 0}, // signed: no shift
		{expr: "arg4 % 8", want: 7},
		{expr: "(-9223372036854775807 - 1) / -1", want: u(math.MinInt64)},
		{expr: "((s64)arg4 - 9223372036854775807) / (s64)arg4", want: u(math.MinInt64)},
		{expr: "((s64)arg4 - 9223372036854775807) % (s64)arg4", want: 0},
		{expr: "1 << 64", want: 1},
		{expr: "arg1 << 65", want: 10},
		{expr: "-16 >> 2", want: u(-4)},
		{expr: "arg4 >> 60", want: 15},
		{expr: "(s8)arg4 >> 1", want: u(-1)},
		{expr: "(u8)-1", want: 255},
		{expr: "(s8)255", want: u(-1)},
		{expr: "(u8)((u8)arg4 + (u8)arg2)", want: 6},
		{expr: "-(u8)arg1", want: 251},
		{expr: "~(u16)arg1", want: 0xfffa},
		{expr: "!arg1", want: 0},
		{expr: "arg4 > 0", want: 1},
		{expr: "(s64)arg4 > 0", want: 0},
		{expr: "ret < 0", want: 1},
		{expr: "ret == -1", want: 1},
		{expr: "arg1 != 5 || arg2 == 7", want: 1},
		{expr: "arg1 ? arg2 : arg3", want: 7},
		{expr: "!arg1 ? arg2 : 3", want: 3},
		{expr: "pid * 1000 + tid", want: 42043},
		{expr: "*(u8*)arg3", want: '/'},
		{expr: "*(u32*)(arg3 + 1)", want: 'e' | 't'<<8 | 'c'<<16 | '/'<<24},
		{expr: "*(s8*)(arg3 - 1000000)", fault: true},
		{expr: "*(u8*)0", fault: true},
		{expr: `str(arg3) == "/etc/passwd"`, want: 1},
		{expr: `str(arg3) != "/etc/passw"`, want: 1},
		{expr: `"passwd" == str(arg3 + 5)`, want: 1},
		{expr: `str(arg3) == str(arg3)`, want: 1},
		{expr: `str(arg6) == "edge"`, want: 1},
		{expr: `str(arg6 + 9) == "abc"`, fault: true}, // "abc" runs into the guard page
		{expr: `str(arg6 + 9) == "ab"`, fault: true},  // reads "abc" and the byte after, as the kernel
		{expr: `str(arg5) == "` + strings.Repeat("a", probe.MaxStrLen) + `"`, want: 1},
		{expr: `str(0) == ""`, fault: true},
		{expr: "0 && *(u8*)0", want: 0},
		{expr: "arg1 || *(u8*)0", want: 1},
		{expr: "arg2 > 9 ? *(u8*)0 : 2", want: 2},
		{expr: "arg7 == *(u64*)arg7", want: 0},
	} {
		s, err := probe.Parse("return:work(" + tt.expr + ")")
		if err != nil {
			t.Errorf("%s: %v", tt.expr, err)
			continue
		}
		e := s.Fetches[0].Expr
		check(t, e, env)
		p, _ := Compile(e)
		v, err := p.Eval(env)
		switch {
		case tt.fault && !errors.Is(err, probe.ErrFault):
			t.Errorf("%s = %d, %v; want a fault", tt.expr, v.Int, err)
		case !tt.fault && (err != nil || v.Int != tt.want):
			t.Errorf("%s = %#x, %v; want %#x\n%s", tt.expr, v.Int, err, tt.want, p)
		}
	}
}

// TestCode pins the code of a few expressions: what the optimizer must
// achieve, in the disassembly the CLI may show.
func TestCode(t *testing.T) {
	for _, tt := range []struct{ cond, code string }{
		{"2*arg1 + 3*arg2 > 0", `
0   arg    r0, 1
1   shl    r0, r0, 1
2   arg    r1, 2
3   mul    r1, r1, 3
4   add    r0, r0, r1`},
		{"(3+4)*arg1 - 10/2 == arg2", `
0   arg    r0, 1
1   mul    r0, r0, 7
2   add    r0, r0, -5
3   arg    r1, 2
4   eq     r0, r0, r1`},
		{"(u8)((u8)arg1 + (u8)arg2) < 3", `
0   arg    r0, 1
1   arg    r1, 2
2   add    r0, r0, r1
3   zext8  r0, r0
4   ult    r0, r0, 3`},
		{`*(u32*)(arg1 + 8) == 5 && str(arg2) != "x"`, `
0   arg    r0, 1
1   ld32   r0, [r0+8]
2   eq     r0, r0, 5
3   jz     r0, 6
4   arg    r0, 2
5   streq  r0, str(r0) != "x"`},
		{"arg1 % 16 < arg2 / 4", `
0   arg    r0, 1
1   and    r0, r0, 15
2   arg    r1, 2
3   shr    r1, r1, 2
4   ult    r0, r0, r1`},
		{"(s16)arg1 + 1 > 0 || ret == -1", `
0   arg    r0, 1
1   sext16 r0, r0
2   add    r0, r0, 1
3   sgt    r0, r0, 0
4   jnz    r0, 7
5   ret    r0
6   eq     r0, r0, -1`},
		{"1 || *(u8*)0", `
0   const  r0, 1`},
	} {
		p, err := CompileCond(parseCond(t, tt.cond))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := strings.TrimSpace(p.String()), strings.TrimSpace(tt.code); got != want {
			t.Errorf("%s:\n%s\nwant\n%s", tt.cond, got, want)
		}
	}
}

// deepExprs builds expressions of the given depth in several shapes.
func deepExprs(d int) map[string]probe.Expr {
	arg := func(i int) probe.Expr { return &probe.Arg{N: 1 + i%6} }
	left, right, tern, deref, mixed := arg(0), arg(0), arg(0), arg(2), arg(0)
	for i := 1; i < d; i++ {
		left = &probe.Binary{Op: probe.OpAdd, X: left, Y: arg(i), T: probe.U64}
		right = &probe.Binary{Op: probe.OpXor, X: arg(i), Y: right, T: probe.U64}
		tern = &probe.Ternary{Cond: arg(i), Then: tern, Else: &probe.Const{Val: uint64(i)}, T: probe.U64}
		deref = &probe.Deref{T: probe.U64, Addr: deref}
		switch i % 4 {
		case 0:
			mixed = &probe.Binary{Op: probe.OpMul, X: arg(i), Y: mixed, T: probe.U64}
		case 1:
			mixed = &probe.Cast{To: probe.S16, X: mixed}
		case 2:
			mixed = &probe.Binary{Op: probe.OpLAnd, X: arg(i), Y: mixed, T: probe.S64}
		case 3:
			mixed = &probe.Unary{Op: probe.OpNeg, X: mixed}
		}
	}
	return map[string]probe.Expr{"left": left, "right": right, "ternary": tern, "deref": deref, "mixed": mixed}
}

// TestDeep compiles 64-level expressions (the parser's limit) of every
// shape and refuses deeper than MaxDepth with a clear error.
func TestDeep(t *testing.T) {
	a := testArena(t)
	env := &testEnv{a: a, regs: [6]uint64{3, 5, a.ptrs[1], 7, 11, 13}, sp: a.ptrs[0]}
	for name, e := range deepExprs(64) {
		if d := depth(e); d != 64 {
			t.Fatalf("%s: depth %d", name, d)
		}
		check(t, e, env)
	}
	for name, e := range deepExprs(MaxDepth + 1) {
		_, err := Compile(e)
		if !errors.Is(err, ErrTooDeep) || !strings.Contains(err.Error(), "201 levels, at most 200") {
			t.Errorf("%s: %v, want ErrTooDeep", name, err)
		}
	}
}

// TestErrors checks what the compiler refuses.
func TestErrors(t *testing.T) {
	for _, e := range []probe.Expr{
		&probe.Ident{Name: "fd"},
		&probe.Binary{Op: probe.OpLt, X: &probe.StrOf{Addr: &probe.Arg{N: 1}}, Y: &probe.StrLit{Val: "a"}, T: probe.S64},
		&probe.Binary{Op: probe.OpEq, X: &probe.StrLit{Val: "a"}, Y: &probe.StrLit{Val: "a"}, T: probe.S64},
		&probe.Deref{T: probe.Type{Size: 3}, Addr: &probe.Arg{N: 1}},
		&probe.Arg{N: 0},
	} {
		if _, err := Compile(e); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: %v, want ErrUnsupported", e, err)
		}
	}
	if _, err := CompileCond(&probe.StrOf{Addr: &probe.Arg{N: 1}}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("string condition: %v", err)
	}
	p, err := CompileCond(nil)
	if err != nil || !p.Cond(nil, nil) {
		t.Errorf("nil condition: %v", err)
	}
}
