//go:build linux && amd64

package syscalls

import (
	"fmt"

	"github.com/utap/utap/probe"
)

// Env is what a system call probe's condition and fetches read
// (probe.Env): the call's arguments and return value, the pid and tid,
// and memory through Mem (the live process, or what a record captured).
type Env struct {
	Call     *Call
	PID, TID int
	Mem      ReadFunc
}

// Arg returns the n-th (1-based) argument of the call.
func (e *Env) Arg(n int) (uint64, error) {
	if n < 1 || n > 6 {
		return 0, fmt.Errorf("system call argument %d: %w", n, probe.ErrFault)
	}
	return e.Call.Args[n-1], nil
}

// Builtin returns ret (the raw return value), pid or tid.
func (e *Env) Builtin(b probe.Builtin) uint64 {
	switch b {
	case probe.BuiltinRet:
		return uint64(e.Call.Ret)
	case probe.BuiltinPID:
		return uint64(e.PID)
	case probe.BuiltinTID:
		return uint64(e.TID)
	}
	return 0
}

// Reg fails: a system call probe reads arguments, not registers.
func (e *Env) Reg(name string) (uint64, error) {
	return 0, fmt.Errorf("register %s: not available at a system call probe", name)
}

// Read fills p from addr through Mem.
func (e *Env) Read(addr uint64, p []byte) error {
	if e.Mem == nil {
		return fmt.Errorf("%#x: %w", addr, probe.ErrFault)
	}
	return e.Mem(addr, p)
}

// Plain reports whether a system call site only selects its call (-S,
// -e trace=): no condition, no fetches. A call several specs select shows
// once: for each spec that is not plain and whose condition holds, else
// for the first plain one.
func Plain(s *probe.Site) bool { return s.Cond == nil && len(s.Fetches) == 0 }
