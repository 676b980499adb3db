//go:build linux && amd64

package elfsym

import "github.com/utap/utap/internal/x86"

// stackguard0 is the offset of g.stackguard0, which every Go stack-split
// prologue compares the stack pointer against.
const stackguard0 = 0x10

// goEntry returns where an entry probe goes in the Go function fn: just
// after its stack-split check (`cmp rsp|r12, [g+0x10]; jbe morestack`).
// When the stack must grow, morestack copies the stack and re-enters the
// function at its first instruction; a probe there would fire twice for one
// call, a probe after the check fires once. Large frames compare r12 (lea
// of rsp minus the frame) and huge ones add a jb before the compare; all
// end in the same cmp+jbe pair. g is r14 in ABIInternal functions, or
// loaded from TLS into rcx first in ABI0 ones. Functions marked nosplit
// have no check: their entry is their first instruction.
func (o *object) goEntry(fn fsym) uint64 {
	const window = 64 // the check is within the first few instructions
	code, err := o.codeAt(fn.addr, min(window, max(fn.size, 1)))
	if err != nil {
		return fn.addr
	}
	if end, ok := x86.StackCheckEnd(code, stackguard0); ok {
		return fn.addr + uint64(end)
	}
	return fn.addr
}
