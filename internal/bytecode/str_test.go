package bytecode

import (
	"errors"
	"strings"
	"testing"

	"github.com/utap/utap/probe"
)

// bufEnv is one readable region at 0x1000 and two arguments.
type bufEnv struct{ mem []byte }

func (e bufEnv) Arg(n int) (uint64, error)  { return []uint64{0x1000, 5, 0}[n-1], nil }
func (bufEnv) Builtin(probe.Builtin) uint64 { return 0 }
func (bufEnv) Reg(string) (uint64, error)   { return 0, errors.New("no registers") }
func (e bufEnv) Read(addr uint64, p []byte) error {
	if addr < 0x1000 || addr-0x1000+uint64(len(p)) > uint64(len(e.mem)) {
		return probe.ErrFault
	}
	copy(p, e.mem[addr-0x1000:])
	return nil
}

// TestSizedAndNullStrings: a sized string (ltrace's string[argN]) and a
// NULL str() come out of the bytecode as from the reference evaluator.
func TestSizedAndNullStrings(t *testing.T) {
	env := bufEnv{mem: []byte("ab\x00cd" + strings.Repeat("x", 300))}
	for _, e := range []*probe.StrOf{
		{Addr: &probe.Arg{N: 1}, Len: &probe.Arg{N: 2}},
		{Addr: &probe.Arg{N: 1}, Len: &probe.Const{Val: 1000, T: probe.U64}},
		{Addr: &probe.Arg{N: 1}, Len: &probe.Arg{N: 3}},
		{Addr: &probe.Arg{N: 3}},
		{Addr: &probe.Const{Val: 0x9000, T: probe.U64}, Len: &probe.Arg{N: 2}},
	} {
		f := probe.Fetch{Expr: e}
		want := probe.FetchValue(f, env)
		p, err := Compile(e)
		if err != nil {
			t.Fatalf("%s: %v", e, err)
		}
		got := p.Fetch(nil, env)
		if got.Str != want.Str || got.IsStr != want.IsStr || got.Null != want.Null || got.Err != want.Err {
			t.Errorf("%s: bytecode %+v, reference %+v", e, got, want)
		}
	}
}
