package uretprobe

import (
	"errors"
	"fmt"

	"github.com/utap/utap/ssol"
)

// ErrRefused: a function's return probe cannot be placed safely.
var ErrRefused = errors.New("return probe refused")

// RetSites returns the addresses of every near RET (c3, c2 iw, and their
// rep/bnd-prefixed forms f3 c3, f2 c3) in code, the whole body of a
// function that starts at address start, decoding forward from its first
// byte. An undecodable instruction refuses the function: skipping a byte
// could resynchronise on a false c3 in the middle of an instruction and
// corrupt it with a breakpoint.
//
// Linear decoding assumes the body holds only instructions. Go's compiler
// never puts data in a function; gcc and clang keep jump tables in .rodata
// on x86-64, but hand-written assembly may embed data and must be probed
// at the return address instead. A function without any RET (it only
// tail-calls, or never returns) gives no sites and no error: its return
// cannot be seen this way.
func RetSites(code []byte, start uint64) ([]uint64, error) {
	var rets []uint64
	for off := 0; off < len(code); {
		inst, err := ssol.Decode(code[off:])
		if err != nil {
			return nil, fmt.Errorf("%w: cannot decode the instruction at %#x (offset %#x): %w",
				ErrRefused, start+uint64(off), off, err)
		}
		if off+inst.Len > len(code) {
			return nil, fmt.Errorf("%w: the instruction at %#x (offset %#x) runs past the function's end: % x",
				ErrRefused, start+uint64(off), off, code[off:])
		}
		if ssol.IsRet(code[off : off+inst.Len]) {
			rets = append(rets, start+uint64(off))
		}
		off += inst.Len
	}
	return rets, nil
}
