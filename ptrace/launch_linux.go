package ptrace

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// launch starts the command seized, stopped after exec before it runs an
// instruction, with a temporary breakpoint where its libraries are loaded
// (armLoaded).
//
// Go's fork/exec offers only PTRACE_TRACEME (not seized: no INTERRUPT, no
// LISTEN), so at the exec trap the child is detached with SIGSTOP, seized
// while stopped, and sent SIGCONT (strace does the same dance before exec).
func (tr *tracer) launch() (outs []func(), err error) {
	t := tr.target
	path, err := exec.LookPath(t.Argv[0])
	if err != nil {
		return nil, err
	}
	var closeAfter []*os.File
	var files [3]uintptr
	for i, s := range []any{t.Stdin, t.Stdout, t.Stderr} {
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
				outs = append(outs, cp)
			}
		}
	}
	env := t.Env
	if env == nil {
		env = os.Environ()
	}
	pid, err := syscall.ForkExec(path, t.Argv, &syscall.ProcAttr{
		Env:   env,
		Files: files[:],
		Sys:   &syscall.SysProcAttr{Ptrace: true},
	})
	for _, f := range closeAfter {
		f.Close()
	}
	if err != nil {
		return outs, fmt.Errorf("starting %s: %w", t.Argv[0], err)
	}
	tr.leader = pid
	if err := tr.seizeChild(pid); err != nil {
		unix.Kill(pid, unix.SIGKILL)
		wait(pid, 0)
		return outs, err
	}
	return outs, nil
}

func (tr *tracer) seizeChild(pid int) error {
	if _, ws, err := wait(pid, 0); err != nil || !ws.Stopped() {
		return fmt.Errorf("pid %d: no stop after exec (%v, %v)", pid, ws, err)
	}
	if err := detach(pid, int(unix.SIGSTOP)); err != nil {
		return fmt.Errorf("pid %d: detach: %w", pid, err)
	}
	if _, ws, err := wait(pid, unix.WUNTRACED); err != nil || !ws.Stopped() {
		return fmt.Errorf("pid %d: no SIGSTOP after detach (%v, %v)", pid, ws, err)
	}
	if err := seize(pid, seizeOptions|unix.PTRACE_O_EXITKILL); err != nil {
		return seizeError(pid, err)
	}
	// Seizing a stopped task makes it report its group-stop.
	if _, ws, err := wait(pid, 0); err != nil || !ws.Stopped() {
		return fmt.Errorf("pid %d: no stop after seize (%v, %v)", pid, ws, err)
	}
	p, err := newProcess(pid)
	if err != nil {
		return err
	}
	tr.procs[pid] = p
	th := tr.addThread(p, pid)
	th.stopped = true
	if err := tr.armLoaded(p); err != nil {
		return err
	}
	// SIGCONT ends the group-stop; it stays pending until we resume the
	// thread, which then sees and passes it on like any signal.
	unix.Kill(pid, unix.SIGCONT)
	return nil
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
