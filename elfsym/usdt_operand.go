//go:build linux && amd64

package elfsym

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/utap/utap/probe"
)

// regPart is where an x86-64 register name lives: in which 64-bit
// register, how many bytes, and at which bit (8 for ah bh ch dh).
type regPart struct {
	reg   string
	size  uint8
	shift uint8
}

// regNames maps every AT&T register name an sdt operand may use to its
// part of a 64-bit register.
var regNames = func() map[string]regPart {
	m := map[string]regPart{"rip": {"rip", 8, 0}}
	for _, l := range "abcd" {
		r := "r" + string(l) + "x"
		m[r] = regPart{r, 8, 0}
		m["e"+string(l)+"x"] = regPart{r, 4, 0}
		m[string(l)+"x"] = regPart{r, 2, 0}
		m[string(l)+"l"] = regPart{r, 1, 0}
		m[string(l)+"h"] = regPart{r, 1, 8}
	}
	for _, n := range []string{"si", "di", "bp", "sp"} {
		r := "r" + n
		m[r] = regPart{r, 8, 0}
		m["e"+n] = regPart{r, 4, 0}
		m[n] = regPart{r, 2, 0}
		m[n+"l"] = regPart{r, 1, 0}
	}
	for i := 8; i <= 15; i++ {
		r := "r" + strconv.Itoa(i)
		m[r] = regPart{r, 8, 0}
		m[r+"d"] = regPart{r, 4, 0}
		m[r+"w"] = regPart{r, 2, 0}
		m[r+"b"] = regPart{r, 1, 0}
		m[r+"l"] = regPart{r, 1, 0} // Intel's name for r8b
	}
	return m
}()

// operandCtx is what turning an operand into an expression needs: the
// probe's link-time address (rip-relative and absolute addresses become
// offsets from it, so the engines need no load bias) and the object's
// symbols.
type operandCtx struct {
	pc     uint64
	lookup func(name string) (uint64, bool)
}

// parseArgs splits a note's argument string into operand texts.
func parseArgs(args string) []string { return strings.Fields(args) }

// parseOperand turns one sdt operand, "[-]SIZE@OPERAND", into an
// expression of the operand's size and signedness:
//
//	8@%rbx          the register              Reg rbx
//	-4@%eax         its low 32 bits, signed   (s32)Reg rax
//	-1@%ah          bits 8..15                (s8)(Reg rax >> 8)
//	8@-16(%rbp)     memory                    *(u64*)(Reg rbp + -16)
//	4@8(%rax,%rbx,4)                          *(u32*)(Reg rax + Reg rbx*4 + 8)
//	8@sym+4(%rip)   memory at a symbol        *(u64*)(Reg rip + (sym+4 - pc))
//	4@$42           a constant                42
//
// An operand without a size (sdt version 1) is a u64.
func (c operandCtx) parseOperand(text string) (probe.Expr, error) {
	t := probe.U64
	op := text
	if at := strings.IndexByte(text, '@'); at > 0 {
		if n, err := strconv.Atoi(text[:at]); err == nil {
			switch n {
			case 1, 2, 4, 8, -1, -2, -4, -8:
			default:
				return nil, fmt.Errorf("operand %q: size %d is not 1, 2, 4 or 8", text, n)
			}
			t = probe.Type{Size: uint8(max(n, -n)), Signed: n < 0}
			op = text[at+1:]
		}
	}
	e, err := c.operand(op, t)
	if err != nil {
		return nil, fmt.Errorf("operand %q: %w", text, err)
	}
	return e, nil
}

func (c operandCtx) operand(op string, t probe.Type) (probe.Expr, error) {
	switch {
	case op == "":
		return nil, fmt.Errorf("empty")
	case op[0] == '%':
		r, ok := regNames[op[1:]]
		if !ok || r.reg == "rip" {
			return nil, fmt.Errorf("unknown register %s", op)
		}
		return typed(regValue(r), t), nil
	case op[0] == '$':
		if v, err := parseInt(op[1:]); err == nil {
			return &probe.Const{Val: uint64(v), T: t}, nil
		}
		a, err := c.address(op[1:])
		if err != nil {
			return nil, err
		}
		return typed(a, t), nil
	}
	addr, err := c.memory(op)
	if err != nil {
		return nil, err
	}
	return &probe.Deref{T: t, Addr: addr}, nil
}

// memory builds the address of DISP(%base,%index,scale), any part
// optional, or of a bare DISP (an absolute link-time address or symbol).
func (c operandCtx) memory(op string) (probe.Expr, error) {
	open := strings.IndexByte(op, '(')
	if open < 0 {
		return c.address(op)
	}
	if !strings.HasSuffix(op, ")") {
		return nil, fmt.Errorf("unsupported form %q", op)
	}
	disp, inner := op[:open], strings.Split(op[open+1:len(op)-1], ",")
	if len(inner) > 3 {
		return nil, fmt.Errorf("unsupported form %q", op)
	}
	var terms []probe.Expr
	base := strings.TrimSpace(inner[0])
	if base == "%rip" {
		if len(inner) > 1 {
			return nil, fmt.Errorf("%%rip takes no index")
		}
		if v, err := parseInt(disp); err == nil || disp == "" {
			// A bare displacement from %rip: there is no instruction
			// after the note's operand, so it counts from the probe.
			return add(&probe.Reg{Name: "rip"}, v), nil
		}
		return c.address(disp)
	}
	if base != "" {
		r, err := addrReg(base)
		if err != nil {
			return nil, err
		}
		terms = append(terms, r)
	}
	if len(inner) > 1 {
		idx, err := addrReg(strings.TrimSpace(inner[1]))
		if err != nil {
			return nil, err
		}
		scale := int64(1)
		if len(inner) == 3 {
			s, err := parseInt(strings.TrimSpace(inner[2]))
			if err != nil || s != 1 && s != 2 && s != 4 && s != 8 {
				return nil, fmt.Errorf("bad scale %q", inner[2])
			}
			scale = s
		}
		if scale != 1 {
			idx = &probe.Binary{Op: probe.OpMul, X: idx, Y: &probe.Const{Val: uint64(scale), T: probe.S64}, T: probe.U64}
		}
		terms = append(terms, idx)
	}
	if len(terms) == 0 {
		return nil, fmt.Errorf("unsupported form %q", op)
	}
	a := terms[0]
	for _, x := range terms[1:] {
		a = &probe.Binary{Op: probe.OpAdd, X: a, Y: x, T: probe.U64}
	}
	if disp == "" {
		return a, nil
	}
	if v, err := parseInt(disp); err == nil {
		return add(a, v), nil
	}
	s, err := c.address(disp)
	if err != nil {
		return nil, err
	}
	return &probe.Binary{Op: probe.OpAdd, X: a, Y: s, T: probe.U64}, nil
}

// address is the runtime address of a link-time address or symbol
// ("sym", "sym+8", "sym-8", "0x404040"), as an offset from the probe's own
// runtime address (Reg rip): right in a PIE, a library or a fixed
// executable alike.
func (c operandCtx) address(s string) (probe.Expr, error) {
	if v, err := parseInt(s); err == nil {
		return add(&probe.Reg{Name: "rip"}, v-int64(c.pc)), nil
	}
	name, off := s, int64(0)
	if i := strings.LastIndexAny(s, "+-"); i > 0 {
		v, err := parseInt(s[i:])
		if err != nil {
			return nil, fmt.Errorf("bad offset in %q", s)
		}
		name, off = s[:i], v
	}
	if strings.ContainsAny(name, "@%()$, ") {
		return nil, fmt.Errorf("unsupported form %q", s)
	}
	if c.lookup == nil {
		return nil, fmt.Errorf("symbol %s: no symbol table", name)
	}
	a, ok := c.lookup(name)
	if !ok {
		return nil, fmt.Errorf("symbol %s is not in the symbol table", name)
	}
	return add(&probe.Reg{Name: "rip"}, int64(a)+off-int64(c.pc)), nil
}

// addrReg is a 64-bit register used in an address.
func addrReg(s string) (probe.Expr, error) {
	r, ok := regNames[strings.TrimPrefix(s, "%")]
	if !strings.HasPrefix(s, "%") || !ok || r.size != 8 || r.reg == "rip" {
		return nil, fmt.Errorf("unsupported address register %q", s)
	}
	return &probe.Reg{Name: r.reg}, nil
}

// regValue is the value of a register part, zero-extended.
func regValue(r regPart) probe.Expr {
	var e probe.Expr = &probe.Reg{Name: r.reg}
	if r.shift != 0 {
		e = &probe.Binary{Op: probe.OpShr, X: e, Y: &probe.Const{Val: uint64(r.shift), T: probe.S64}, T: probe.U64}
	}
	if r.size < 8 {
		// A narrower part than the operand: only its own bits count.
		e = &probe.Cast{To: probe.Type{Size: r.size}, X: e}
	}
	return e
}

// typed gives e the operand's type t, truncating and extending as needed.
func typed(e probe.Expr, t probe.Type) probe.Expr {
	if e.Type() == t {
		return e
	}
	if c, ok := e.(*probe.Cast); ok && c.To.Size >= t.Size {
		// (s32)(u32)rax is (s32)rax.
		return &probe.Cast{To: t, X: c.X}
	}
	return &probe.Cast{To: t, X: e}
}

// add is e + v, leaving out + 0.
func add(e probe.Expr, v int64) probe.Expr {
	if v == 0 {
		return e
	}
	return &probe.Binary{Op: probe.OpAdd, X: e, Y: &probe.Const{Val: uint64(v), T: probe.S64}, T: probe.U64}
}

// parseInt parses a decimal, 0x hex or 0 octal integer with an optional sign.
func parseInt(s string) (int64, error) {
	s = strings.TrimPrefix(s, "+")
	neg := strings.HasPrefix(s, "-")
	u, err := strconv.ParseUint(strings.TrimPrefix(s, "-"), 0, 64)
	if err != nil {
		return 0, err
	}
	if neg {
		return -int64(u), nil
	}
	return int64(u), nil
}
