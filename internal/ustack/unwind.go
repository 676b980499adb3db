//go:build linux && amd64

package ustack

import (
	"debug/elf"
	"encoding/binary"

	"github.com/go-delve/delve/pkg/dwarf/frame"
	"golang.org/x/sys/unix"

	"github.com/utap/utap/internal/proc"
)

// DWARF register numbers of x86-64 (System V psABI, figure 3.36).
const (
	regRBX = 3
	regRBP = 6
	regRSP = 7
	regR12 = 12
	regR15 = 15
	regRA  = 16
	nRegs  = 17
)

// Unwinder walks the user stacks of stopped threads. One per trace; not
// safe for concurrent use (the ptrace engine's locked goroutine owns it).
type Unwinder struct {
	Maps Maps
	objs map[objKey]*objCFI
}

type objKey struct {
	path string
	dev  string
	ino  uint64
}

// objCFI is one object's call frame information, at link-time addresses.
type objCFI struct {
	loads []elf.ProgHeader
	fdes  frame.FrameDescriptionEntries // sorted; nil: none (frame pointers only)
	// rows caches the CFI row of each link-time pc seen (nil: no FDE):
	// running the CIE's and FDE's programs to a pc allocates and is most
	// of an unwind, and a trace's stacks go through the same pcs.
	rows map[uint64]*frame.FrameContext
}

// maxRows bounds an object's cached rows: past it the cache starts over.
const maxRows = 1 << 16

// Memory reads tracee memory (proc.Memory's ReadAt).
type Memory interface {
	ReadAt(p []byte, addr uint64) error
}

// Fix maps a return address read at slot back to the real one: the ptrace
// engine's return trampoline, put in place of a hijacked return address,
// becomes the address its shadow stack keeps. Nil: none.
type Fix func(slot, ra uint64) uint64

// Walk returns at most depth return addresses of the thread of pid with
// registers regs, innermost first, regs.Rip first. Each frame's rule comes
// from the .eh_frame FDE covering its pc; a pc no FDE covers (Go code, a
// JIT, a stripped object) takes the frame-pointer rule. The walk stops at
// an undefined return address (the outermost frame), a read that fails,
// or a stack pointer that does not grow.
func (u *Unwinder) Walk(pid int, regs *unix.PtraceRegs, mem Memory, fix Fix, depth int) []uint64 {
	if depth <= 0 {
		return nil
	}
	var r [nRegs]uint64
	var valid [nRegs]bool
	set := func(n int, v uint64) { r[n], valid[n] = v, true }
	set(0, regs.Rax)
	set(1, regs.Rdx)
	set(2, regs.Rcx)
	set(regRBX, regs.Rbx)
	set(4, regs.Rsi)
	set(5, regs.Rdi)
	set(regRBP, regs.Rbp)
	set(regRSP, regs.Rsp)
	set(8, regs.R8)
	set(9, regs.R9)
	set(10, regs.R10)
	set(11, regs.R11)
	set(12, regs.R12)
	set(13, regs.R13)
	set(14, regs.R14)
	set(15, regs.R15)
	pc := regs.Rip
	pcs := make([]uint64, 0, depth)
	pcs = append(pcs, pc)
	var b [8]byte
	read := func(addr uint64) (uint64, bool) {
		if mem.ReadAt(b[:], addr) != nil {
			return 0, false
		}
		return binary.LittleEndian.Uint64(b[:]), true
	}
	for len(pcs) < depth {
		lookup := pc
		if len(pcs) > 1 {
			lookup = pc - 1 // the call, not what follows it (a noreturn call ends its function)
		}
		ctx := u.frameAt(pid, lookup)
		var cfa, ra, slot uint64
		var ok bool
		if ctx != nil && ctx.CFA.Rule == frame.RuleCFA && int(ctx.CFA.Reg) < nRegs && valid[ctx.CFA.Reg] {
			cfa = uint64(int64(r[ctx.CFA.Reg]) + ctx.CFA.Offset)
			rule, has := ctx.Regs[ctx.RetAddrReg]
			if !has || rule.Rule == frame.RuleUndefined {
				break // the outermost frame (_start, clone's child)
			}
			if rule.Rule != frame.RuleOffset {
				break
			}
			slot = uint64(int64(cfa) + rule.Offset)
			if ra, ok = read(slot); !ok {
				break
			}
			// Callee-saved registers the frame saved; the others are
			// unknown in the caller (only the CFA's may be needed).
			var next [nRegs]uint64
			var nextValid [nRegs]bool
			for n := range nRegs {
				rule, has := ctx.Regs[uint64(n)]
				switch {
				case has && rule.Rule == frame.RuleOffset:
					if v, ok := read(uint64(int64(cfa) + rule.Offset)); ok {
						next[n], nextValid[n] = v, true
					}
				case has && rule.Rule == frame.RuleValOffset:
					next[n], nextValid[n] = uint64(int64(cfa)+rule.Offset), true
				case has && rule.Rule == frame.RuleRegister && int(rule.Reg) < nRegs:
					next[n], nextValid[n] = r[rule.Reg], valid[rule.Reg]
				case has && rule.Rule == frame.RuleUndefined:
				case n == regRBX || n == regRBP || (n >= regR12 && n <= regR15):
					next[n], nextValid[n] = r[n], valid[n] // same value
				}
			}
			next[regRSP], nextValid[regRSP] = cfa, true
			r, valid = next, nextValid
		} else {
			// Frame pointers: [rbp] is the caller's rbp, [rbp+8] the
			// return address.
			bp := r[regRBP]
			if !valid[regRBP] || bp == 0 || bp < r[regRSP] || bp&7 != 0 {
				break
			}
			slot = bp + 8
			if ra, ok = read(slot); !ok {
				break
			}
			nbp, ok := read(bp)
			if !ok {
				break
			}
			cfa = bp + 16
			valid = [nRegs]bool{}
			set(regRBP, nbp)
			set(regRSP, cfa)
		}
		if fix != nil {
			ra = fix(slot, ra)
		}
		if ra == 0 {
			break
		}
		pcs = append(pcs, ra)
		pc = ra
	}
	return pcs
}

// frameAt returns the CFI row for runtime address pc of pid, nil when no
// FDE covers it.
func (u *Unwinder) frameAt(pid int, pc uint64) (ctx *frame.FrameContext) {
	defer func() {
		if recover() != nil {
			ctx = nil // a malformed FDE: frame pointers instead
		}
	}()
	m, ok := u.Maps.Find(pid, pc)
	if !ok || m.Path == "" || m.Path[0] != '/' {
		return nil
	}
	o := u.object(m)
	if o == nil || o.fdes == nil {
		return nil
	}
	bias, ok := proc.Bias(m, o.loads)
	if !ok {
		return nil
	}
	at := pc - bias
	if row, ok := o.rows[at]; ok {
		return row
	}
	if o.rows == nil || len(o.rows) >= maxRows {
		o.rows = map[uint64]*frame.FrameContext{}
	}
	o.rows[at] = nil // a panic below leaves it unknown: frame pointers
	fde, err := o.fdes.FDEForPC(at)
	if err != nil {
		return nil
	}
	ctx, err = fde.EstablishFrame(at)
	if err != nil {
		return nil
	}
	o.rows[at] = ctx
	return ctx
}

// object returns the CFI of m's file, parsed once per trace.
func (u *Unwinder) object(m proc.Mapping) *objCFI {
	k := objKey{path: m.Path, dev: m.Dev, ino: m.Inode}
	if o, ok := u.objs[k]; ok {
		return o
	}
	if u.objs == nil {
		u.objs = map[objKey]*objCFI{}
	}
	o := loadCFI(m.Path)
	u.objs[k] = o
	return o
}

func loadCFI(path string) (o *objCFI) {
	defer func() {
		if recover() != nil && o != nil {
			o.fdes = nil // malformed .eh_frame: frame pointers only
		}
	}()
	f, err := elf.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	o = &objCFI{}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			o.loads = append(o.loads, p.ProgHeader)
		}
	}
	sec := f.Section(".eh_frame")
	if sec == nil || sec.Type == elf.SHT_NOBITS {
		return o
	}
	data, err := sec.Data()
	if err != nil {
		return o
	}
	fdes, err := frame.Parse(data, binary.LittleEndian, 0, 8, sec.Addr)
	if err != nil {
		return o
	}
	o.fdes = frame.FrameDescriptionEntries(nil).Append(fdes)
	return o
}
