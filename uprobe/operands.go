//go:build linux && amd64

package uprobe

import (
	"fmt"

	"github.com/cilium/ebpf/asm"
	"github.com/utap/utap/probe"
)

// A binary operator needs both operands in registers (R0 and R1), but
// computing the second clobbers everything the first left in R0–R5: the
// first waits in a stack slot. Reads have no side effects, so either
// operand may go first; operands goes first with the one that needs more
// slots (Sethi-Ullman), and loads leaves straight into their register.

// regAlloc is where an expression's values wait: registers loaded
// straight from the context, and the stack slots of the values an
// operand keeps while the other is computed.
type regAlloc struct {
	*code
	abi   probe.ABI
	kind  probe.Kind
	depth int // stack slots in use
}

// direct says whether e loads into a register with one instruction that
// touches no other register.
func (g *regAlloc) direct(e probe.Expr) bool {
	switch e := e.(type) {
	case *probe.Const:
		return true
	case *probe.Arg:
		return e.N >= 1 && e.N <= len(argRegs[g.abi])
	case *probe.Reg:
		_, ok := namedRegs[e.Name]
		return ok
	case probe.Builtin:
		return (e == probe.BuiltinRet || e.EntryArgN() > 0) && g.kind == probe.Return
	}
	return false
}

// load puts a direct expression in r.
func (g *regAlloc) load(e probe.Expr, r asm.Register) {
	switch e := e.(type) {
	case *probe.Const:
		g.emit(asm.LoadImm(r, int64(constVal(e)), asm.DWord))
	case *probe.Arg:
		g.emit(asm.LoadMem(r, asm.R6, argRegs[g.abi][e.N-1], asm.DWord))
	case *probe.Reg:
		g.emit(asm.LoadMem(r, asm.R6, namedRegs[e.Name], asm.DWord))
	case probe.Builtin:
		if n := e.EntryArgN(); n > 0 {
			// Copied from the entry-time map by takeEntryTime.
			g.emit(asm.LoadMem(r, asm.RFP, int16(slotEntry+8*n), asm.DWord))
			return
		}
		g.emit(asm.LoadMem(r, asm.R6, retReg, asm.DWord))
	}
}

// need is how many stack slots computing e takes.
func (g *regAlloc) need(e probe.Expr) int {
	switch e := e.(type) {
	case *probe.Unary:
		return g.need(e.X)
	case *probe.Cast:
		return g.need(e.X)
	case *probe.Deref:
		return g.need(e.Addr)
	case *probe.StrOf:
		return g.need(e.Addr)
	case *probe.Ternary:
		return max(g.need(e.Cond), g.need(e.Then), g.need(e.Else))
	case *probe.Binary:
		nx, ny := g.need(e.X), g.need(e.Y)
		switch {
		case e.Op == probe.OpLAnd || e.Op == probe.OpLOr:
			return max(nx, ny)
		case e.X.Type().Str:
			if _, ok := e.Y.(*probe.StrOf); ok {
				if _, ok := e.X.(*probe.StrOf); ok {
					return max(ny, nx+1) // y's address waits while x is read
				}
			}
			return max(nx, ny)
		case g.direct(e.Y):
			return nx
		case g.direct(e.X):
			return ny
		}
		return min(max(nx, ny+1), max(ny, nx+1))
	}
	return 0
}

// push saves R0 in the next stack slot.
func (g *regAlloc) push() error {
	if g.depth >= MaxDepth {
		return fmt.Errorf("%w: it needs more than %d intermediate values", ErrTooDeep, MaxDepth)
	}
	g.emit(asm.StoreMem(asm.RFP, int16(slotStack-8*g.depth), asm.R0, asm.DWord))
	g.depth++
	return nil
}

// pop restores the last saved value into r.
func (g *regAlloc) pop(r asm.Register) {
	g.depth--
	g.emit(asm.LoadMem(r, asm.RFP, int16(slotStack-8*g.depth), asm.DWord))
}

// constVal is a literal's 64-bit value, extended by its type.
func constVal(e *probe.Const) uint64 {
	v, t := e.Val, e.Type()
	if t.Size == 0 || t.Size >= 8 {
		return v
	}
	sh := 64 - 8*uint(t.Size)
	if t.Signed {
		return uint64(int64(v<<sh) >> sh)
	}
	return v << sh >> sh
}
