//go:build linux && amd64

package uprobe

import (
	"bytes"
	"testing"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/probe"
)

// TestExprSemantics runs expressions in the kernel over the fixture's
// signed argument pairs and checks them against Go, with and without the
// v4 ISA's signed division.
func TestExprSemantics(t *testing.T) {
	need.Uprobes(t)
	bin := fixture.C(t, "et_work.c")
	sa := &probe.Cast{To: probe.S64, X: arg(1)}
	sb := &probe.Cast{To: probe.S64, X: arg(2)}
	ua, ub := arg(1), arg(2)
	bin2 := func(op probe.Op, x, y probe.Expr, ty probe.Type) probe.Expr {
		return &probe.Binary{Op: op, X: x, Y: y, T: ty}
	}
	b2i := func(c bool) int64 {
		if c {
			return 1
		}
		return 0
	}
	cases := []struct {
		e    probe.Expr
		want func(a, b int64) int64
	}{
		{bin2(probe.OpDiv, sa, sb, probe.S64), func(a, b int64) int64 {
			if b == 0 {
				return 0
			}
			return a / b
		}},
		{bin2(probe.OpMod, sa, sb, probe.S64), func(a, b int64) int64 {
			if b == 0 {
				return 0
			}
			return a % b
		}},
		{bin2(probe.OpDiv, ua, ub, probe.U64), func(a, b int64) int64 {
			if b == 0 {
				return 0
			}
			return int64(uint64(a) / uint64(b))
		}},
		{bin2(probe.OpMod, ua, ub, probe.U64), func(a, b int64) int64 {
			if b == 0 {
				return 0
			}
			return int64(uint64(a) % uint64(b))
		}},
		{bin2(probe.OpShr, sa, sb, probe.S64), func(a, b int64) int64 { return a >> (b & 63) }},
		{bin2(probe.OpShr, ua, ub, probe.U64), func(a, b int64) int64 { return int64(uint64(a) >> (b & 63)) }},
		{bin2(probe.OpShl, ua, &probe.Const{Val: 70}, probe.U64), func(a, b int64) int64 { return a << 6 }},
		{&probe.Cast{To: probe.S8, X: ua}, func(a, b int64) int64 { return int64(int8(a)) }},
		{&probe.Cast{To: probe.U16, X: ua}, func(a, b int64) int64 { return int64(uint16(a)) }},
		{bin2(probe.OpAdd, &probe.Cast{To: probe.U8, X: ua}, &probe.Cast{To: probe.U8, X: ub}, probe.U8),
			func(a, b int64) int64 { return int64(uint8(a) + uint8(b)) }},
		{bin2(probe.OpLt, sa, sb, probe.S64), func(a, b int64) int64 { return b2i(a < b) }},
		{bin2(probe.OpLt, ua, ub, probe.S64), func(a, b int64) int64 { return b2i(uint64(a) < uint64(b)) }},
		{bin2(probe.OpGe, sa, sb, probe.S64), func(a, b int64) int64 { return b2i(a >= b) }},
		{&probe.Unary{Op: probe.OpNot, X: ua}, func(a, b int64) int64 { return b2i(a == 0) }},
		{&probe.Unary{Op: probe.OpNeg, X: sa}, func(a, b int64) int64 { return -a }},
		{&probe.Unary{Op: probe.OpCompl, X: ua}, func(a, b int64) int64 { return ^a }},
		{&probe.Ternary{Cond: bin2(probe.OpGt, sa, sb, probe.S64), Then: sa, Else: sb, T: probe.S64},
			func(a, b int64) int64 { return max(a, b) }},
		{bin2(probe.OpLAnd, ua, ub, probe.S64), func(a, b int64) int64 { return b2i(a != 0 && b != 0) }},
		{bin2(probe.OpLOr, ua, &probe.Const{Val: 0}, probe.S64), func(a, b int64) int64 { return b2i(a != 0) }},
		{bin2(probe.OpMul, sa, sb, probe.S64), func(a, b int64) int64 { return a * b }},
		{bin2(probe.OpXor, bin2(probe.OpOr, ua, ub, probe.U64), bin2(probe.OpAnd, ua, ub, probe.U64), probe.U64),
			func(a, b int64) int64 { return (a | b) ^ (a & b) }},
	}
	var exprs []probe.Expr
	for _, c := range cases {
		exprs = append(exprs, c.e)
	}
	spec := &probe.Spec{Text: "work(exprs)", Symbol: "work", Fetches: fetches(append([]probe.Expr{ua, ub}, exprs...)...)}
	site := funcSite(t, bin, "work", 0, spec)
	for _, v4 := range []bool{true, false} {
		saved := haveV4
		haveV4 = func() bool { return v4 && saved() }
		c, _ := run(t, &Engine{}, probe.Target{Argv: []string{bin, "signed"}, Stdout: &bytes.Buffer{}}, []probe.Site{site})
		haveV4 = saved
		if c.n != 7 {
			t.Fatalf("v4=%v: %d events, want 7", v4, c.n)
		}
		for _, ev := range c.evs {
			a, b := int64(ev.Args[0].Int), int64(ev.Args[1].Int)
			for i, cs := range cases {
				got := ev.Args[i+2]
				if want := cs.want(a, b); got.Err || int64(got.Int) != want {
					t.Errorf("v4=%v a=%d b=%d: %s = %d (err %v), want %d", v4, a, b, cs.e, int64(got.Int), got.Err, want)
				}
			}
		}
	}
}
