//go:build linux && amd64

package uprobe

import (
	"golang.org/x/sys/unix"

	"github.com/utap/utap/internal/proc"
	"github.com/utap/utap/internal/syscalls"
	"github.com/utap/utap/probe"
)

// execCall rebuilds the execve that started the command held at its exec
// (syscalls.ExecCall): no tracepoint saw it, it ran before the programs
// were in. Called on the thread that holds the command, which alone may
// read its registers.
func execCall(pid, strsize int) *syscalls.Call {
	sp, execfn, err := proc.ExecStack(pid, pid)
	if err != nil {
		return nil
	}
	if strsize <= 0 {
		strsize = syscalls.DefaultStrSize
	}
	return syscalls.ExecCall(sp, execfn, strsize, readMem(pid))
}

// execEvent is the event of that execve for the execve site that takes
// it (its condition holds), nil when none.
func (y *sysSession) execEvent(c *child) *probe.Event {
	if y == nil || c.exec == nil {
		return nil
	}
	call := y.calls[unix.SYS_EXECVE]
	if call == nil {
		return nil
	}
	site := &y.sites[call.site]
	ev := &probe.Event{TimeNs: monotonicNow(), PID: c.pid(), TID: c.pid(), Probe: site.Spec.Text, Func: site.Func,
		Kind: "return", ProbeIndex: site.Probe, Sys: c.exec}
	if !probe.EvalCond(site.Cond, sysEnv(ev, call.info.caps)) {
		return nil
	}
	fetchSys(ev, site, call.info.caps)
	return ev
}

func monotonicNow() int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}
