//go:build linux && amd64

package elfsym

import (
	"fmt"

	"github.com/utap/utap/internal/x86"
)

// maxInsn is the longest x86 instruction.
const maxInsn = 15

// insnAt checks that addr is an instruction boundary of fn by decoding
// forward from the function's start, and returns the bytes of the
// instruction at addr. A probe placed mid-instruction would corrupt the
// tracee, so an address that cannot be proven a boundary is refused.
func (o *object) insnAt(fn fsym, addr uint64) ([]byte, error) {
	code, err := o.codeAt(fn.addr, addr-fn.addr+maxInsn)
	if err != nil {
		return nil, err
	}
	pc := fn.addr
	for pc < addr {
		n, err := x86.Len(code[pc-fn.addr:])
		if err != nil {
			return nil, fmt.Errorf("%s+%#x: cannot check that %#x is an instruction boundary: %w", fn.name, pc-fn.addr, addr, err)
		}
		if pc+uint64(n) > addr {
			return nil, fmt.Errorf("%s+%#x is %w: it falls inside the %d-byte instruction at %s+%#x; the nearest boundaries are %s+%#x and %s+%#x",
				fn.name, addr-fn.addr, ErrNotBoundary, n, fn.name, pc-fn.addr, fn.name, pc-fn.addr, fn.name, pc+uint64(n)-fn.addr)
		}
		pc += uint64(n)
	}
	return decodeOne(code[addr-fn.addr:], addr)
}

// decodeOne returns a copy of the bytes of the instruction at the start of
// code, which sits at addr.
func decodeOne(code []byte, addr uint64) ([]byte, error) {
	n, err := x86.Len(code)
	if err != nil {
		return nil, fmt.Errorf("instruction at %#x: %w", addr, err)
	}
	return append([]byte(nil), code[:n]...), nil
}
