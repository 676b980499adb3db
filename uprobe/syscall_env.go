//go:build linux && amd64

package uprobe

import (
	"fmt"

	"github.com/utap/utap/internal/syscalls"
	"github.com/utap/utap/probe"
)

// A system call site's fetches (Site.Fetches: the defaults Bind gives, or
// the user's) are evaluated in user space from the call's record with
// probe.FetchValue: arguments, ret, pid and tid exactly; memory only as
// far as the call's captures hold it (a read elsewhere faults), since the
// tracee has moved on by the time the record is read. Conditions are not
// evaluated here: the kernel does (syscall_prog.go).

// sysEnv is the syscalls.Env of a call's record: memory only as far
// as its captures hold it.
func sysEnv(ev *probe.Event, caps []sysCap) *syscalls.Env {
	return &syscalls.Env{Call: ev.Sys, PID: ev.PID, TID: ev.TID, Mem: func(addr uint64, p []byte) error {
		return capturedRead(ev.Sys, caps, addr, p)
	}}
}

// capturedRead serves memory from the captures of a call: exit ones
// (what the call wrote), then entry ones.
func capturedRead(sys *probe.Syscall, caps []sysCap, addr uint64, p []byte) error {
	for _, side := range [][][]byte{sys.Exit, sys.Entry} {
		for i, b := range side {
			c := caps[i]
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
	env := sysEnv(ev, caps)
	ev.Args = make([]probe.Value, len(s.Fetches))
	for i, f := range s.Fetches {
		ev.Args[i] = probe.FetchValue(f, env)
	}
}
