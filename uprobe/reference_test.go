//go:build linux && amd64

package uprobe

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/probe"
)

// argsEnv is a probe.Env of two argument registers and no memory.
type argsEnv struct {
	a, b     uint64
	pid, tid uint64
}

func (e argsEnv) Arg(n int) (uint64, error) {
	switch n {
	case 1:
		return e.a, nil
	case 2:
		return e.b, nil
	}
	return 0, fmt.Errorf("%w: no arg%d", probe.ErrFault, n)
}

func (e argsEnv) Builtin(b probe.Builtin) uint64 {
	if b == probe.BuiltinPID {
		return e.pid
	}
	return e.tid
}

func (argsEnv) Reg(name string) (uint64, error) {
	return 0, fmt.Errorf("%w: no register %q", probe.ErrFault, name)
}

func (argsEnv) Read(addr uint64, p []byte) error {
	return fmt.Errorf("%w: no memory at %#x", probe.ErrFault, addr)
}

// referenceExprs are checked against probe.Eval: every operator at every
// signedness, and expressions as deep as the parser allows.
var referenceExprs = []string{
	"(s64)arg1 / (s64)arg2", "(s64)arg1 % (s64)arg2", "arg1 / arg2", "arg1 % arg2",
	"(s64)arg1 / arg2", "arg1 % (s64)arg2", "(s32)arg1 / (s16)arg2", "(u8)arg1 % (s8)arg2",
	"(s64)arg1 >> arg2", "(s64)arg1 >> (s64)arg2", "arg1 >> (s64)arg2", "(s8)arg1 >> 3", "(u16)arg1 >> 1",
	"arg1 << arg2", "(s32)arg1 << 40", "1 << 64", "arg1 << 70",
	"(s64)arg1 < (s64)arg2", "(s64)arg1 < arg2", "arg1 <= (s64)arg2", "(s8)arg1 > (s8)arg2", "(u8)arg1 >= (s8)arg2",
	"arg1 == arg2", "(s16)arg1 != (u16)arg1", "-1 < 0", "-1 < arg1",
	"-(s64)arg1", "-arg1", "~(u8)arg1", "~(s8)arg1", "!arg1", "!(u8)arg2",
	"(u8)arg1 + (u8)arg2", "(s8)arg1 * (s8)arg2", "(s16)arg1 - 40000", "(u32)(arg1 * arg2)",
	"arg1 & arg2 | arg1 ^ arg2", "(s32)arg1 & (u16)arg2",
	"arg1 ? arg2 : 7", "(s64)arg1 > 0 ? (s8)arg2 : (s16)arg1", "(s64)arg1 > 0 ? arg2 : (s64)-1",
	"arg1 && arg2", "arg1 || 0", "!arg1 || arg2 / 0", "0 && *(u64*)0",
	"pid == pid && tid == tid", "(s64)arg1 / 0", "(s64)arg1 % 0", "-9223372036854775807 - 1",
	"*(u32*)arg1 + 1", "arg2 ? *(u8*)8 : 5",
	nested(60), balanced(7, 0),
}

// nested is an expression n levels deep that keeps a left operand pending
// at every level: (s64)arg1 - ((s64)arg2 * ((s64)arg1 - (...))).
func nested(n int) string {
	ops := []string{"-", "*", "/", "%", ">>", "^"}
	e := "(s64)arg2"
	for i := 0; i < n/2; i++ {
		e = fmt.Sprintf("((s64)arg%d %s %s)", 1+i%2, ops[i%len(ops)], e)
	}
	return e
}

// balanced is a complete binary tree of height h whose leaves are not
// direct loads: it needs h stack slots.
func balanced(h, i int) string {
	if h == 0 {
		return fmt.Sprintf("(s64)(arg%d + %d)", 1+i%2, i)
	}
	ops := []string{"-", "/", "%", ">>", "<", "*"}
	return fmt.Sprintf("(%s %s %s)", balanced(h-1, 2*i), ops[(h+i)%len(ops)], balanced(h-1, 2*i+1))
}

// TestExprReference runs expressions in the kernel and compares every
// value with the reference evaluator, probe.Eval, with and without the
// v4 ISA's signed division.
func TestExprReference(t *testing.T) {
	need.Uprobes(t)
	bin := fixture.C(t, "et_work.c")
	text := "work(arg1, arg2, " + strings.Join(referenceExprs, ", ") + ")"
	spec, err := probe.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	site := funcSite(t, bin, "work", 0, spec)
	for _, v4 := range []bool{true, false} {
		saved := haveV4
		haveV4 = func() bool { return v4 && saved() }
		c, _ := run(t, &Engine{}, probe.Target{Argv: []string{bin, "pairs"}, Stdout: &bytes.Buffer{}}, []probe.Site{site})
		haveV4 = saved
		if c.n != 16 {
			t.Fatalf("v4=%v: %d events, want 16", v4, c.n)
		}
		n := 0
		for _, ev := range c.evs {
			n += len(spec.Fetches) - 2
			env := argsEnv{a: ev.Args[0].Int, b: ev.Args[1].Int, pid: uint64(ev.PID), tid: uint64(ev.TID)}
			for i, f := range spec.Fetches[2:] {
				want := probe.FetchValue(f, env)
				if got := ev.Args[i+2]; got != want {
					t.Errorf("v4=%v a=%d b=%d: %.60s = %+v, want %+v", v4, int64(env.a), int64(env.b), referenceExprs[i], got, want)
				}
			}
		}
		t.Logf("v4=%v: %d values agree with probe.Eval", v4, n)
	}
}

// TestStrStr compares strings read from memory with each other, across
// the 32-byte chunks the second is read in, truncation at MaxStrLen and
// unmapped pages.
func TestStrStr(t *testing.T) {
	need.Uprobes(t)
	bin := fixture.C(t, "et_work.c")
	spec, err := probe.Parse("same(str(arg1) == str(arg2), str(arg2) != str(arg1))")
	if err != nil {
		t.Fatal(err)
	}
	cond, err := probe.Parse(`same if str(arg1) == str(arg2) || str(arg2) == "abcd"`)
	if err != nil {
		t.Fatal(err)
	}
	cond.Fetches = fetches(&probe.StrOf{Addr: arg(2)})
	sites := []probe.Site{funcSite(t, bin, "same", 0, spec), funcSite(t, bin, "same", 0, cond)}
	c, _ := run(t, &Engine{}, probe.Target{Argv: []string{bin, "strs"}}, sites)
	var got []string
	for _, ev := range c.evs {
		got = append(got, eventArgs([]probe.Event{ev}))
	}
	long := strings.Repeat("abcdefghijklmnopqrstuvwxyz", 10)[:256]
	want := []string{"1 0", fmt.Sprintf("%q", long), "0 1", "1 0", fmt.Sprintf("%q", long), "0 1", `"abcd"`,
		"1 0", `""`, "1 0", fmt.Sprintf("%q", long[260%26:][:40]), "1 0", fmt.Sprintf("%q", long[268%26:][:32]), "0 1",
		"1 0", `"tail"`, "? ?", "? ?"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got  %.12q\nwant %.12q", got, want)
	}
}
