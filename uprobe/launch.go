package uprobe

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"

	"github.com/utap/utap/probe"
	"golang.org/x/sys/unix"
)

// child is a command held at its exec trap until its probes are in: it is
// started traced (PTRACE_TRACEME), so the kernel stops it right after
// execve, before its first instruction, and released with PTRACE_DETACH.
// ptrace only answers the thread that is the tracer, so one locked
// goroutine starts, waits for and detaches the child.
type child struct {
	cmd     *exec.Cmd
	release chan struct{}
	result  chan error
}

func startHeld(t probe.Target) (*child, error) {
	cmd := exec.Command(t.Argv[0], t.Argv[1:]...)
	cmd.Env = t.Env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = t.Stdin, t.Stdout, t.Stderr
	if cmd.Stdin == nil {
		cmd.Stdin = os.Stdin
	}
	if cmd.Stdout == nil {
		cmd.Stdout = os.Stdout
	}
	if cmd.Stderr == nil {
		cmd.Stderr = os.Stderr
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Ptrace: true}
	c := &child{cmd: cmd, release: make(chan struct{}), result: make(chan error, 1)}
	started := make(chan error, 1)
	go func() {
		// Never unlocked: the thread exits with the goroutine, so no other
		// goroutine inherits a thread that is (or was) someone's tracer.
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- fmt.Errorf("starting %s: %w", t.Argv[0], err)
			return
		}
		pid := cmd.Process.Pid
		var ws unix.WaitStatus
		if _, err := unix.Wait4(pid, &ws, unix.WALL, nil); err != nil {
			started <- fmt.Errorf("waiting for %s to exec: %w", t.Argv[0], err)
			return
		}
		if !ws.Stopped() {
			started <- fmt.Errorf("%s ended before its exec trap (status %#x)", t.Argv[0], ws)
			return
		}
		started <- nil
		<-c.release
		c.result <- unix.PtraceDetach(pid)
	}()
	if err := <-started; err != nil {
		if cmd.Process != nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
		return nil, err
	}
	return c, nil
}

func (c *child) pid() int { return c.cmd.Process.Pid }

// run lets the child go.
func (c *child) run() error {
	close(c.release)
	if err := <-c.result; err != nil {
		return fmt.Errorf("releasing pid %d: %w", c.pid(), err)
	}
	return nil
}

// kill ends a child that is still held or running.
func (c *child) kill() {
	c.cmd.Process.Kill()
	select {
	case <-c.release:
	default:
		close(c.release)
		<-c.result
	}
}

// exitCode turns cmd.Wait's result into a shell-style status.
func exitCode(err error) (int, error) {
	if err == nil {
		return 0, nil
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return 0, err
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), nil
	}
	return ee.ExitCode(), nil
}
