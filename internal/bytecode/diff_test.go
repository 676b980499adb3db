package bytecode

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/utap/utap/probe"
)

// same reports how got differs from the reference, or "".
func same(ref probe.Value, refErr error, got probe.Value, gotErr error) string {
	switch {
	case (refErr != nil) != (gotErr != nil):
		return fmt.Sprintf("error %v, reference error %v", gotErr, refErr)
	case refErr != nil:
		return ""
	case got.IsStr != ref.IsStr || got.Str != ref.Str || got.Int != ref.Int || got.Signed != ref.Signed:
		return fmt.Sprintf("%+v, reference %+v", got, ref)
	}
	return ""
}

// check evaluates e at env by every path — reference, simplified tree,
// bytecode with arguments from env or preloaded, condition — and fails
// on any disagreement.
func check(t testing.TB, e probe.Expr, env *testEnv) {
	t.Helper()
	ref, refErr := probe.Eval(e, env)
	fail := func(what, diff string, p *Program) {
		t.Helper()
		t.Fatalf("%s of %s\nwith args %#x sp %#x ret %#x:\n%s\n%s", what, e, env.regs, env.sp, env.ret, diff, p)
	}
	s, sErr := probe.Eval(simplify(e), env)
	if d := same(ref, refErr, s, sErr); d != "" {
		t.Fatalf("simplified %s (from %s): %s", simplify(e), e, d)
	}
	p, err := Compile(e)
	if err != nil {
		t.Fatalf("compile %s: %v", e, err)
	}
	got, gotErr := p.Eval(env)
	if d := same(ref, refErr, got, gotErr); d != "" {
		fail("Eval", d, p)
	}
	got, gotErr = p.EvalArgs(env.regs[:], env)
	if d := same(ref, refErr, got, gotErr); d != "" {
		fail("EvalArgs", d, p)
	}
	f := probe.Fetch{Expr: e, Format: probe.FormatHex}
	pf, err := CompileFetch(f)
	if err != nil {
		t.Fatalf("compile fetch %s: %v", e, err)
	}
	if want, got := probe.FetchValue(f, env), pf.Clone().Fetch(env.regs[:], env); got != want {
		fail("Fetch", fmt.Sprintf("%+v, reference %+v", got, want), p)
	}
	if e.Type().Str {
		return
	}
	c, err := CompileCond(e)
	if err != nil {
		t.Fatalf("compile condition %s: %v", e, err)
	}
	if want, got := probe.EvalCond(e, env), c.Cond(env.regs[:], env); got != want {
		fail("Cond", fmt.Sprintf("%v, reference %v", got, want), c)
	}
}

// differential runs one generated case: an expression from seed, checked
// at several hits drawn from envSeed.
func differential(t testing.TB, seed, envSeed int64, depth int) {
	a := testArena(t)
	g := &gen{r: rand.New(rand.NewSource(seed)), a: a, strStr: true, builtin: true, regs: true}
	e := g.fetch(depth)
	g.r = rand.New(rand.NewSource(envSeed))
	for range 8 {
		check(t, e, g.env(4242, 4243))
	}
}

// TestDifferential checks bytecode against probe.Eval on thousands of
// random expressions of every node kind.
func TestDifferential(t *testing.T) {
	n := 4000
	if testing.Short() {
		n = 500
	}
	for seed := range int64(n) {
		differential(t, seed, seed^0x5eed, 2+int(seed%7))
	}
}

// FuzzDifferential is TestDifferential under the fuzzer:
// go test ./bytecode -fuzz FuzzDifferential.
func FuzzDifferential(f *testing.F) {
	for seed := range int64(16) {
		f.Add(seed, seed*7, uint8(seed%9))
	}
	f.Fuzz(func(t *testing.T, seed, envSeed int64, depth uint8) {
		differential(t, seed, envSeed, 1+int(depth%12))
	})
}
