//go:build linux && amd64

package proc

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// Command is a command to start held at its exec.
type Command struct {
	Argv   []string
	Env    []string // nil: inherit
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Cred   *syscall.Credential // nil: the tracer's user
}

// Child is a command started by Start: traced by the thread that started
// it (PTRACE_TRACEME), stopped by the kernel right after execve, before its
// first instruction.
type Child struct {
	Pid  int
	name string
	outs []func() // copiers of piped output, run by Output
}

// Start starts c held at its exec. Call it from a goroutine locked to its
// OS thread: the kernel ties the child to that thread, which must make every
// later ptrace request for it (Seize, Release, RunToLoaded).
func Start(c Command) (*Child, error) {
	path, err := exec.LookPath(c.Argv[0])
	if err != nil {
		return nil, err
	}
	ch := &Child{name: c.Argv[0]}
	var closeAfter []*os.File
	var files [3]uintptr
	for i, s := range []any{c.Stdin, c.Stdout, c.Stderr} {
		f, cp, err := stdio(i, s)
		if err != nil {
			return nil, err
		}
		files[i] = f.Fd()
		if cp != nil {
			closeAfter = append(closeAfter, f)
			if i == 0 {
				defer func() { go cp() }() // stdin: fed while it runs, never awaited
			} else {
				ch.outs = append(ch.outs, cp)
			}
		}
	}
	env := c.Env
	if env == nil {
		env = os.Environ()
	}
	pid, err := syscall.ForkExec(path, c.Argv, &syscall.ProcAttr{
		Env:   env,
		Files: files[:],
		Sys:   &syscall.SysProcAttr{Ptrace: true, Credential: c.Cred},
	})
	for _, f := range closeAfter {
		f.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", c.Argv[0], err)
	}
	ch.Pid = pid
	if _, ws, err := Wait(pid, 0); err != nil || !ws.Stopped() {
		ch.Kill()
		if err == nil {
			err = fmt.Errorf("status %#x", ws)
		}
		return nil, fmt.Errorf("%s ended before its exec trap: %w", c.Argv[0], err)
	}
	return ch, nil
}

// Output runs the copiers of the child's piped output and returns a channel
// closed once they have all finished (every writer of the pipes, the child
// and its descendants, has closed them).
func (c *Child) Output() <-chan struct{} {
	done := make(chan struct{})
	go func() {
		n := make(chan struct{}, len(c.outs))
		for _, cp := range c.outs {
			go func() { cp(); n <- struct{}{} }()
		}
		for range c.outs {
			<-n
		}
		close(done)
	}()
	return done
}

// Release lets the held child run, untraced (PTRACE_DETACH).
func (c *Child) Release() error {
	if err := Detach(c.Pid, 0); err != nil {
		return fmt.Errorf("releasing pid %d: %w", c.Pid, err)
	}
	return nil
}

// Seize turns the hold into a seized tracee (INTERRUPT, LISTEN and
// EVENT_STOP need PTRACE_SEIZE, which Go's fork/exec cannot ask for):
// detached with SIGSTOP, seized with opts while stopped, its group-stop
// report taken. It stays stopped; SIGCONT, sent by the caller, ends the
// group-stop once it is resumed (strace does the same dance before exec).
func (c *Child) Seize(opts int) error {
	pid := c.Pid
	if err := Detach(pid, int(unix.SIGSTOP)); err != nil {
		return fmt.Errorf("pid %d: detach: %w", pid, err)
	}
	if _, ws, err := Wait(pid, unix.WUNTRACED); err != nil || !ws.Stopped() {
		return fmt.Errorf("pid %d: no SIGSTOP after detach (%v, %v)", pid, ws, err)
	}
	if err := Seize(pid, opts); err != nil {
		return SeizeError(pid, err)
	}
	// Seizing a stopped task makes it report its group-stop.
	if _, ws, err := Wait(pid, 0); err != nil || !ws.Stopped() {
		return fmt.Errorf("pid %d: no stop after seize (%v, %v)", pid, ws, err)
	}
	return nil
}

// Kill ends the child, held or running, and reaps it.
func (c *Child) Kill() {
	unix.Kill(c.Pid, unix.SIGKILL)
	var ws unix.WaitStatus
	unix.Wait4(c.Pid, &ws, unix.WALL, nil)
}

// Wait reaps the released child and returns its shell-style exit status
// (128+signal when killed).
func (c *Child) Wait() (int, error) {
	var ws unix.WaitStatus
	for {
		_, err := unix.Wait4(c.Pid, &ws, 0, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("waiting for %s: %w", c.name, err)
		}
		break
	}
	if ws.Signaled() {
		return 128 + int(ws.Signal()), nil
	}
	return ws.ExitStatus(), nil
}

// stdio returns the file the child gets as fd i: the caller's *os.File,
// the process's own, or a pipe with a copier for any other reader/writer.
func stdio(i int, s any) (*os.File, func(), error) {
	switch v := s.(type) {
	case *os.File:
		if v != nil {
			return v, nil, nil
		}
	case io.Reader:
		if v != nil && i == 0 {
			r, w, err := os.Pipe()
			if err != nil {
				return nil, nil, err
			}
			return r, func() { io.Copy(w, v); w.Close() }, nil
		}
	}
	if w, ok := s.(io.Writer); ok && w != nil && i > 0 {
		r, wf, err := os.Pipe()
		if err != nil {
			return nil, nil, err
		}
		return wf, func() { io.Copy(w, r); r.Close() }, nil
	}
	return []*os.File{os.Stdin, os.Stdout, os.Stderr}[i], nil, nil
}
