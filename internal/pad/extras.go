package pad

import (
	"fmt"

	"github.com/utap/utap/internal/bytecode"
	"github.com/utap/utap/internal/x86"
)

// Values past a record's MaxValues (mmap's six arguments; a return's
// output argument with the entry's other arguments and the return value
// and time). A record's values are words in its slot; a string's bytes
// are in its value's part of the string area (strs.go), which a value
// that is no string leaves unused. The extra values go there, in the
// part of value ExtraSlot (a plain one), as words: the site word says so
// (extraBit, the slot at extraSlotShift), and the pad reserves as a
// string's does (room), so no unread record shares that part.
const (
	MaxExtra       = 4
	extraBit       = 1 << 48
	extraSlotShift = 49
)

// extraSlot is extra value k's frame word, from its program to the
// record (emitExtra).
func extraSlot(frame int32, k int) x86.Mem { return topSlot(frame, 2+MaxValues+k) }

// checkExtra says whether s's extra values can be kept.
func checkExtra(s Spec) error {
	if len(s.Extra) == 0 {
		return nil
	}
	if len(s.Extra) > MaxExtra {
		return fmt.Errorf("pad: %d values past a record's, at most %d", len(s.Extra), MaxExtra)
	}
	if s.ExtraSlot < 0 || s.ExtraSlot >= MaxValues || strMask(s)&(1<<s.ExtraSlot) != 0 {
		return fmt.Errorf("pad: extra values in value %d's string part, which is a string's", s.ExtraSlot)
	}
	for _, p := range s.Extra {
		if p.Reads() || p.Type().Str {
			return fmt.Errorf("%w: an extra value that reads memory", bytecode.ErrNotNative)
		}
	}
	return nil
}

// extraBits are the site word's bits for s's extra values.
func extraBits(s Spec) uint64 {
	if len(s.Extra) == 0 {
		return 0
	}
	return extraBit | uint64(s.ExtraSlot)<<extraSlotShift
}

// emitExtra copies the extra values from the frame into the claimed
// record's part of value ExtraSlot (rcx = the record's index). Clobbers
// rax, rdx, r8.
func emitExtra(a *x86.Asm, s Spec) {
	if len(s.Extra) == 0 {
		return
	}
	frame, _ := frameSize(s)
	a.MovRR(x86.RAX, x86.RCX)
	strPart(a, s, s.ExtraSlot, x86.RAX, x86.RDX)
	for k := range s.Extra {
		a.Load(x86.R8, extraSlot(frame, k))
		a.Store(x86.Mem{Base: x86.RAX, Disp: int32(8 * k)}, x86.R8)
	}
}
