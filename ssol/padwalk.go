//go:build linux && amd64

package ssol

import (
	"fmt"
	"sync"

	"github.com/utap/utap/internal/x86"
	"golang.org/x/arch/x86/x86asm"
)

// checkBranches walks fn linearly and says why (site, end) may be reached
// other than through site, or "" (PlanPad's branch rules).
func checkBranches(fn []byte, fnAddr, site, end uint64) string {
	entry := site == fnAddr
	if entry {
		return entryBranches.check(fn, fnAddr, end)
	}
	return walkBranches(fn, fnAddr, site, end)
}

// walkBranches is checkBranches by decoding fn.
func walkBranches(fn []byte, fnAddr, site, end uint64) string {
	entry := site == fnAddr
	onSite := entry
	why := ""
	bad := walk(fn, fnAddr, entry, func(pc uint64, inst x86asm.Inst) bool {
		if pc == site {
			onSite = true
		}
		if t, ok := branchTarget(pc, inst); ok && t > site && t < end {
			why = fmt.Sprintf("the branch at %#x lands inside the range, at %#x", pc, t)
		} else if !entry && isIndirectJmp(inst) {
			why = fmt.Sprintf("the function has an indirect jmp at %#x (a jump table may land anywhere)", pc)
		}
		return why == ""
	})
	switch {
	case why != "":
		return why
	case bad >= 0:
		return fmt.Sprintf("cannot decode the function at %#x", fnAddr+uint64(bad))
	case !onSite:
		return "not an instruction boundary of the function"
	}
	return ""
}

// walk decodes code linearly and calls visit for each instruction until
// it returns false. At undecodable bytes it steps one byte when resync,
// else it stops and returns their offset; it returns -1 otherwise.
func walk(code []byte, addr uint64, resync bool, visit func(pc uint64, inst x86asm.Inst) bool) int {
	for off := 0; off < len(code); {
		inst, err := x86.Decode(code[off:])
		if err != nil || off+inst.Len > len(code) {
			if !resync {
				return off
			}
			off++
			continue
		}
		if !visit(addr+uint64(off), inst) {
			return -1
		}
		off += inst.Len
	}
	return -1
}

// branchTarget is the target of a direct branch at pc.
func branchTarget(pc uint64, inst x86asm.Inst) (uint64, bool) {
	for _, a := range inst.Args {
		if r, ok := a.(x86asm.Rel); ok {
			return pc + uint64(inst.Len) + uint64(int64(r)), true
		}
	}
	return 0, false
}

// isIndirectJmp: jmp through a register or memory, near or far.
func isIndirectJmp(inst x86asm.Inst) bool {
	if inst.Op == x86asm.LJMP {
		return true
	}
	if inst.Op != x86asm.JMP {
		return false
	}
	_, rel := inst.Args[0].(x86asm.Rel)
	return !rel
}

// entryBranches keeps which function entries checkBranches let through,
// by the function's bytes and the range's length: the same function in
// every process image that maps its file (position-independent code, the
// same bytes), whose whole decoding was a fifth of placing libc's pads in
// each. A refusal is walked again: its reason names addresses.
var entryBranches = branchVerdicts{m: map[branchKey]bool{}}

type branchVerdicts struct {
	sync.Mutex
	m     map[branchKey]bool
	bytes int
}

type branchKey struct {
	fn  string
	len uint64
}

// maxBranchBytes bounds the functions' bytes entryBranches keeps.
const maxBranchBytes = 64 << 20

func (v *branchVerdicts) check(fn []byte, fnAddr, end uint64) string {
	k := branchKey{string(fn), end - fnAddr}
	v.Lock()
	ok, known := v.m[k]
	v.Unlock()
	if known && ok {
		return ""
	}
	why := walkBranches(fn, fnAddr, fnAddr, end)
	v.Lock()
	if _, dup := v.m[k]; !dup && v.bytes+len(fn) <= maxBranchBytes {
		v.m[k] = why == ""
		v.bytes += len(fn)
	}
	v.Unlock()
	return why
}
