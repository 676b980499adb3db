//go:build linux && amd64

package compare

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/utap/utap/elfsym"
	"github.com/utap/utap/probe"
)

// peerProbe is one of the user's probes as the peers can place it: the
// entry of a named function, arguments read from registers, at most a
// comparison of one argument with a constant as condition.
type peerProbe struct {
	Object string // absolute path of the ELF file
	Main   bool   // Object is the command's executable
	Func   string
	Regs   []string  // fetched arguments' registers, bpftrace's names (di, si)
	Cond   *peerCond // nil: always
}

// peerCond is `Reg Op Val`, Op a C comparison, the register signed.
type peerCond struct {
	Reg, Op string
	Val     int64
}

// sysvRegs and goRegs hold the integer argument registers of each ABI.
var (
	sysvRegs = []string{"di", "si", "dx", "cx", "r8", "r9"}
	goRegs   = []string{"ax", "bx", "cx", "di", "si", "r8", "r9", "r10", "r11"}
)

// peerProbes resolves the user's specs against the command's executable
// and libraries, as utap would, and translates each site for the peers;
// an error wrapping ErrNotApplicable says which spec cannot be and why.
func peerProbes(specs []string, exe string) ([]peerProbe, error) {
	var parsed []*probe.Spec
	for _, text := range specs {
		s, err := probe.Parse(text)
		if err != nil {
			return nil, err
		}
		if s.Kind != probe.Entry {
			return nil, notApplicable("%s: only function entries are translated for other tools", text)
		}
		if strings.HasSuffix(s.Symbol, "@plt") || s.Symbol == "" || s.Offset != 0 {
			return nil, notApplicable("%s: only function entries are translated for other tools (no PLT stubs, offsets or addresses)", text)
		}
		parsed = append(parsed, s)
	}
	sites, err := elfsym.Resolve(parsed, elfsym.Target{Exe: exe})
	if err != nil {
		return nil, notApplicable("resolving the probes: %v", err)
	}
	var out []peerProbe
	for i := range sites {
		s := &sites[i]
		p, err := peerSite(s, exe)
		if err != nil {
			return nil, notApplicable("%s: %v", s.Spec.Text, err)
		}
		out = append(out, p)
	}
	return out, nil
}

func peerSite(s *probe.Site, exe string) (peerProbe, error) {
	p := peerProbe{Object: s.Object, Func: s.Func, Main: sameFile(s.Object, exe)}
	if s.Func == "" || s.Addr != s.FuncAddr {
		return p, fmt.Errorf("not a function entry")
	}
	regs := sysvRegs
	if s.ABI == probe.ABIGoRegs {
		regs = goRegs
	}
	reg := func(e probe.Expr) (string, bool) {
		a, ok := e.(*probe.Arg)
		if !ok || a.N < 1 || a.N > len(regs) {
			return "", false
		}
		return regs[a.N-1], true
	}
	fetches := s.Fetches
	if len(s.Spec.Fetches) == 0 {
		fetches = nil // the prototype's defaults: the peers show their own
	}
	for _, f := range fetches {
		r, ok := reg(f.Expr)
		if !ok {
			return p, fmt.Errorf("fetch %q is not an argument in a register", f.Text)
		}
		p.Regs = append(p.Regs, r)
	}
	if s.Cond != nil {
		c, ok := peerCondition(s.Cond, reg)
		if !ok {
			return p, fmt.Errorf("the condition is not `argN OP constant`")
		}
		p.Cond = c
	}
	return p, nil
}

var cOps = map[probe.Op]string{probe.OpEq: "==", probe.OpNe: "!=", probe.OpLt: "<", probe.OpLe: "<=", probe.OpGt: ">", probe.OpGe: ">="}

// flipped is the operator with its operands swapped: 3 < arg1 is arg1 > 3.
var flipped = map[string]string{"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}

func peerCondition(e probe.Expr, reg func(probe.Expr) (string, bool)) (*peerCond, bool) {
	b, ok := e.(*probe.Binary)
	if !ok || cOps[b.Op] == "" {
		return nil, false
	}
	op := cOps[b.Op]
	x, y := b.X, b.Y
	if _, isConst := x.(*probe.Const); isConst {
		x, y, op = y, x, flipped[op]
	}
	r, ok := reg(x)
	c, isConst := y.(*probe.Const)
	if !ok || !isConst {
		return nil, false
	}
	return &peerCond{Reg: r, Op: op, Val: int64(c.Val)}, true
}

func sameFile(a, b string) bool {
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return a == b || err1 == nil && err2 == nil && ra == rb
}
