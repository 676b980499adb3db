package pad

import (
	"encoding/binary"
	"fmt"
)

// A dispatch pad serves a `syscall` whose number the instructions before
// it do not set (glibc's syscall(), a Go runtime's Syscall6): it runs the
// displaced instructions, then compares eax with the probed numbers. A
// call not among them is made from the pad, which jumps back after the
// original `syscall`: no stop, no record. A probed one jumps to its own
// system call pad, with no displaced instructions (BuildSys), when it has
// one; else to the original `syscall`, where the tracer's trap takes it
// (ptrace's padsystrap.go). The comparisons change neither flags nor any register
// but rcx, which the `syscall` itself overwrites: `lea -nr(%rax),%rcx;
// jrcxz` per number.

// MaxDispatch is the most numbers a dispatch pad compares.
const MaxDispatch = 64

// DispatchParts are offsets in a dispatch pad: where its comparisons
// start (the displaced instructions end) and its `syscall`.
type DispatchParts struct{ Compare, Syscall int }

// BuildDispatch returns the dispatch pad of the `syscall` at sc,
// assembled to run at `at`, its displaced instructions (relocated, with no
// jump back) first, for the numbers nrs; to holds the system call pads of
// those that have one (within ±2 GiB).
func BuildDispatch(displaced []byte, at uint64, nrs []int, to map[int]uint64, sc uint64) ([]byte, DispatchParts, error) {
	if len(nrs) > MaxDispatch {
		return nil, DispatchParts{}, fmt.Errorf("pad: %d numbers to compare, more than %d", len(nrs), MaxDispatch)
	}
	code := append([]byte(nil), displaced...)
	parts := DispatchParts{Compare: len(code)}
	var toProbed []int // the rel32 of each jmp to the probed exit
	for _, nr := range nrs {
		// lea -nr(%rax),%rcx; jrcxz +2; jmp +5; jmp its pad or the trap
		code = append(code, 0x48, 0x8d, 0x88)
		code = binary.LittleEndian.AppendUint32(code, uint32(-int32(nr)))
		code = append(code, 0xe3, 0x02, 0xeb, 0x05, 0xe9)
		if pad, ok := to[nr]; ok {
			rel := int64(pad) - int64(at+uint64(len(code))+4)
			if rel != int64(int32(rel)) {
				return nil, DispatchParts{}, fmt.Errorf("pad: the pad of call %d at %#x is beyond ±2 GiB of %#x", nr, pad, at)
			}
			code = binary.LittleEndian.AppendUint32(code, uint32(int32(rel)))
			continue
		}
		toProbed = append(toProbed, len(code))
		code = append(code, 0, 0, 0, 0)
	}
	parts.Syscall = len(code)
	code = append(code, 0x0f, 0x05)
	code = AbsJmp(code, sc+2)
	probed := len(code)
	for _, at := range toProbed {
		binary.LittleEndian.PutUint32(code[at:], uint32(int32(probed-(at+4))))
	}
	return AbsJmp(code, sc), parts, nil
}

// AbsJmp appends `jmp *0(%rip)` to `to`, which reaches anywhere.
func AbsJmp(code []byte, to uint64) []byte {
	code = append(code, 0xff, 0x25, 0, 0, 0, 0)
	return binary.LittleEndian.AppendUint64(code, to)
}
