package uretprobe

import (
	"errors"
	"fmt"

	"github.com/utap/utap/internal/x86"
)

// ErrRefused: a function's return probe cannot be placed safely.
var ErrRefused = errors.New("return probe refused")

// RetSites returns the addresses of every near RET (c3, c2 iw, and their
// rep/bnd-prefixed forms f3 c3, f2 c3) in code, the whole body of a
// function that starts at address start (x86.Rets). An undecodable
// instruction refuses the function. A function without any RET (it only
// tail-calls, or never returns) gives no sites and no error: its return
// cannot be seen this way.
func RetSites(code []byte, start uint64) ([]uint64, error) {
	offs, err := x86.Rets(code)
	if we := (*x86.WalkError)(nil); errors.As(err, &we) {
		return nil, fmt.Errorf("%w: cannot decode the instruction at %#x (offset %#x): %w",
			ErrRefused, start+uint64(we.Off), we.Off, we.Err)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRefused, err)
	}
	rets := make([]uint64, len(offs))
	for i, off := range offs {
		rets[i] = start + uint64(off)
	}
	return rets, nil
}
