//go:build linux && amd64

package uprobe

import (
	"fmt"

	"github.com/utap/utap/probe"
)

// A system call site's fetches (Site.Fetches: the defaults Bind gives, or
// the user's) are evaluated in user space from the call's record with
// probe.FetchValue: arguments, ret, pid and tid exactly; memory only as
// far as the call's captures hold it (a read elsewhere faults), since the
// tracee has moved on by the time the record is read. Conditions are not
// evaluated here: the kernel does (syscall_prog.go).
type sysEnv struct {
	ev   *probe.Event
	caps []sysCap
}

func (e sysEnv) Arg(n int) (uint64, error) {
	if n < 1 || n > 6 {
		return 0, fmt.Errorf("system call argument %d: %w", n, probe.ErrFault)
	}
	return e.ev.Sys.Args[n-1], nil
}

func (e sysEnv) Builtin(b probe.Builtin) uint64 {
	switch b {
	case probe.BuiltinRet:
		return uint64(e.ev.Sys.Ret)
	case probe.BuiltinPID:
		return uint64(e.ev.PID)
	case probe.BuiltinTID:
		return uint64(e.ev.TID)
	}
	return 0
}

func (e sysEnv) Reg(name string) (uint64, error) {
	return 0, fmt.Errorf("register %s: %w in a system call's record", name, ErrUnsupported)
}

// Read serves memory from the captures of the call: entry ones, then
// exit ones (what the call wrote).
func (e sysEnv) Read(addr uint64, p []byte) error {
	sys := e.ev.Sys
	for _, side := range [][][]byte{sys.Exit, sys.Entry} {
		for i, b := range side {
			c := e.caps[i]
			if b == nil || c.kind == capStrArray {
				continue
			}
			base := sys.Args[c.arg]
			if addr >= base && addr-base+uint64(len(p)) <= uint64(len(b)) {
				copy(p, b[addr-base:])
				return nil
			}
		}
	}
	return fmt.Errorf("%#x: %w (not captured)", addr, probe.ErrFault)
}

// fetchSys fills ev.Args from the site's fetches.
func fetchSys(ev *probe.Event, s *probe.Site, caps []sysCap) {
	if len(s.Fetches) == 0 {
		return
	}
	env := sysEnv{ev: ev, caps: caps}
	ev.Args = make([]probe.Value, len(s.Fetches))
	for i, f := range s.Fetches {
		ev.Args[i] = probe.FetchValue(f, env)
	}
}
