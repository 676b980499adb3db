//go:build linux && amd64

package ptrace

import (
	"github.com/utap/utap/internal/proc"
	"golang.org/x/sys/unix"
)

// launch starts the command held at its exec (proc.Start), seizes it
// stopped before its first instruction, and arms the temporary breakpoint
// where its libraries are loaded (armLoaded). copied closes once the
// command's piped output is all copied.
func (tr *tracer) launch() (copied <-chan struct{}, err error) {
	t := tr.target
	c, err := proc.Start(proc.Command{Argv: t.Argv, Env: t.Env, Stdin: t.Stdin, Stdout: t.Stdout, Stderr: t.Stderr, Cred: t.Cred})
	if err != nil {
		return nil, err
	}
	copied = c.Output()
	tr.leader = c.Pid
	if err := tr.seizeChild(c); err != nil {
		c.Kill()
		return copied, err
	}
	return copied, nil
}

func (tr *tracer) seizeChild(c *proc.Child) error {
	// No PTRACE_O_EXITKILL: a trace dying must not take the command with
	// it (the supervisor in cmd/utap makes utap's own death a clean detach).
	if err := c.Seize(tr.sys.seizeOptions()); err != nil {
		return err
	}
	pid := c.Pid
	p, err := newProcess(pid)
	if err != nil {
		return err
	}
	tr.procs[pid] = p
	th := tr.addThread(p, pid)
	th.stopped = true
	launchTrapState(p, th)
	if tr.sys != nil {
		tr.sys.execLine(th)
	}
	if err := tr.ld.armLoaded(p); err != nil {
		return err
	}
	if tr.sys.useFilter() {
		tr.sys.installFilter(p, th)
	}
	// SIGCONT ends the group-stop; it stays pending until we resume the
	// thread, which then sees and passes it on like any signal.
	unix.Kill(pid, unix.SIGCONT)
	p.ourCont = true
	return nil
}
