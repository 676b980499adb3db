package ssol

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/utap/utap/internal/x86"
)

// A hop: a function entry whose instructions give no five bytes for the
// jump (glibc's memmove, whose fourth byte mempcpy jumps to; a function
// of three bytes, `xor %eax,%eax; ret`) takes a two-byte jmp rel8 to a
// jump in the alignment padding just before it, nops or int3s nothing
// lands in. A path that falls through the padding into the function
// (glibc's __memmove_chk falls into memmove) meets that jump at an
// instruction boundary of its own and enters the pad as it would have
// entered the function: at its entry, the same registers and stack.

// hopLen is the bytes of the jump at the entry: jmp rel8.
const hopLen = 2

// Before is the code before a function, for a hop: Code from At, an
// instruction boundary (a landing), up to the function; Lands says where
// code elsewhere jumps: one inside an instruction decoded from At means
// that decoding is not the code's.
type Before struct {
	Code  []byte
	At    uint64
	Lands func(uint64) bool
}

// PlanEntry plans a pad at a function's entry (site == fnAddr, fn its
// code): PlanPad's jump, or where that is refused a hop through the
// padding before reads. The error is PlanPad's when the hop is refused
// too.
func PlanEntry(fn []byte, fnAddr uint64, busy func(uint64) bool, before func() (Before, error)) (*Displaced, error) {
	d, err := PlanPad(fn, fnAddr, fnAddr, busy)
	if err == nil || before == nil {
		return d, err
	}
	b, berr := before()
	if berr != nil {
		return nil, err
	}
	if h, herr := PlanHop(b, fn, fnAddr, busy); herr == nil {
		return h, nil
	}
	return nil, err
}

// PlanHop plans the displaced instructions at fnAddr, a function's entry
// (fn its code), for a hop through the padding before it (b). busy is
// asked of every address the hop takes but the entry.
func PlanHop(b Before, fn []byte, fnAddr uint64, busy func(uint64) bool) (*Displaced, error) {
	no := noPadAt(fnAddr)
	if len(fn) == 0 {
		return nil, no("function size unknown")
	}
	d, err := displace(fn, fnAddr, fnAddr, hopLen, busy, no)
	if err != nil {
		return nil, err
	}
	at, err := hopSlot(b, fnAddr, busy)
	if err != nil {
		return nil, no("%v", err)
	}
	d.Hop = at
	d.hopFill = append([]byte(nil), b.Code[at+JumpLen-b.At:]...)
	return d, nil
}

// hopSlot finds where the hop's jump goes: the instruction boundary
// closest to fnAddr in the run of nops and int3s that ends at fnAddr
// (b's code decoded from its start), with the jump's five bytes before
// fnAddr, within a jmp rel8 of the entry, nothing busy from there to
// fnAddr.
func hopSlot(b Before, fnAddr uint64, busy func(uint64) bool) (uint64, error) {
	pre, preAddr := b.Code, b.At
	if preAddr >= fnAddr || uint64(len(pre)) != fnAddr-preAddr {
		return 0, errors.New("no code before the function")
	}
	var starts []uint64 // the boundaries of the trailing run of padding
	for off := 0; off < len(pre); {
		inst, err := x86.Decode(pre[off:])
		if err != nil || off+inst.Len > len(pre) {
			return 0, fmt.Errorf("the code before the function does not decode at %#x", preAddr+uint64(off))
		}
		// Something lands inside this instruction: the decoding is not
		// the code's (its start was no boundary), or the code is odd.
		for a := preAddr + uint64(off) + 1; a < preAddr+uint64(off+inst.Len) && b.Lands != nil; a++ {
			if b.Lands(a) {
				return 0, fmt.Errorf("code lands at %#x, inside the instruction at %#x", a, preAddr+uint64(off))
			}
		}
		if fill(pre[off:]) == inst.Len {
			starts = append(starts, preAddr+uint64(off))
		} else {
			starts = starts[:0]
		}
		off += inst.Len
	}
	for i := len(starts) - 1; i >= 0; i-- {
		at := starts[i]
		if at+JumpLen > fnAddr {
			continue
		}
		if int64(at)-int64(fnAddr+hopLen) < -128 {
			break
		}
		for a := at; a < fnAddr; a++ {
			if busy != nil && busy(a) {
				return 0, fmt.Errorf("the padding before the function is busy at %#x", a)
			}
		}
		return at, nil
	}
	return 0, errors.New("no padding for a jump before the function")
}

// Span is the bytes a pad's jump takes: from the hop's jump in the
// padding when there is one, else from the site, to the displaced
// instructions' end.
func (d *Displaced) Span() (start uint64, n int) {
	if d.Hop != 0 {
		return d.Hop, int(d.Addr + uint64(d.Len) - d.Hop)
	}
	return d.Addr, d.Len
}

// hopJump is Jump for a hop: the jump in the padding, the padding after
// it as it was, the jmp rel8 at the site.
func (d *Displaced) hopJump(pad uint64) ([]byte, error) {
	rel, ok := rel32(d.Hop+JumpLen, pad)
	if !ok {
		return nil, fmt.Errorf("%w at %#x: the pad at %#x is beyond ±2 GiB", ErrNoPad, d.Addr, pad)
	}
	b := binary.LittleEndian.AppendUint32([]byte{0xe9}, uint32(rel))
	b = append(b, d.hopFill...)
	return append(b, 0xeb, byte(int8(int64(d.Hop)-int64(d.Addr+hopLen)))), nil
}
