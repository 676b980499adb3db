//go:build linux && amd64

package ssol

import (
	"encoding/binary"
	"fmt"
	"math"
)

// ActionFor is the action the instruction takes when it runs from the slot
// at slotAddr: a RIP-relative Boost instruction whose operand is beyond
// ±2 GiB of the slot becomes Step (its operand is then reached through a
// scratch register).
func (in *Insn) ActionFor(slotAddr uint64) Action {
	if in.Action == Boost && in.an.dispOff >= 0 {
		if _, ok := in.relocatedDisp(slotAddr); !ok {
			return Step
		}
	}
	return in.Action
}

// relocatedDisp is the disp32 that keeps the RIP-relative operand's target
// when the instruction runs at slotAddr.
func (in *Insn) relocatedDisp(slotAddr uint64) (int32, bool) {
	d := int64(in.an.disp) + int64(in.Addr-slotAddr)
	return int32(d), d >= math.MinInt32 && d <= math.MaxInt32
}

// Slot returns the bytes to write into the slot at slotAddr (at most
// SlotSize) for Boost and Step instructions, and sets in.Action to
// ActionFor(slotAddr):
//   - Boost: the copy, its disp32 rewritten for the slot's address, then a
//     jump back to Addr+len (e9 rel32, or ff 25 00000000 abs64 when the
//     slot is beyond ±2 GiB of the code);
//   - Step: the copy addressing [scratch+disp32] instead of
//     [rip+disp32], then an int3.
func (in *Insn) Slot(slotAddr uint64) ([]byte, error) {
	in.Action = in.ActionFor(slotAddr)
	n := len(in.Bytes)
	switch in.Action {
	case Step:
		s := make([]byte, 0, n+1)
		return append(append(s, in.an.stepped...), 0xcc), nil
	case Boost:
		s := make([]byte, n, SlotSize)
		copy(s, in.Bytes)
		if in.an.dispOff >= 0 {
			d, _ := in.relocatedDisp(slotAddr)
			binary.LittleEndian.PutUint32(s[in.an.dispOff:], uint32(d))
		}
		back := in.Addr + uint64(n)
		rel := int64(back - (slotAddr + uint64(n) + 5))
		if rel >= math.MinInt32 && rel <= math.MaxInt32 {
			s = append(s, 0xe9)
			return binary.LittleEndian.AppendUint32(s, uint32(int32(rel))), nil
		}
		s = append(s, 0xff, 0x25, 0, 0, 0, 0) // jmp [rip+0]: the address follows
		return binary.LittleEndian.AppendUint64(s, back), nil
	}
	return nil, fmt.Errorf("ssol: %s at %#x is emulated: it has no slot", in.Text, in.Addr)
}

// SlotPC maps a rip inside the instruction's slot back to the equivalent
// original address (slot start → Addr; after the copy → Addr+len), for a
// signal that arrives while a thread runs in the slot. A Step thread past
// the copy still holds the scratch value: call PostStep instead.
func (in *Insn) SlotPC(rip, slotAddr uint64) uint64 {
	if rip-slotAddr < uint64(len(in.Bytes)) {
		return in.Addr
	}
	return in.Addr + uint64(len(in.Bytes))
}
