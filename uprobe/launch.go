//go:build linux && amd64

package uprobe

import (
	"errors"
	"os"
	"os/exec"
	"runtime"

	"github.com/utap/utap/internal/proc"
	"github.com/utap/utap/internal/syscalls"
	"github.com/utap/utap/probe"
)

// child is a command held at its exec trap until its probes are in
// (proc.Start), then released with PTRACE_DETACH. ptrace only answers the
// thread that is the tracer, so one locked goroutine starts it, may run it
// to the loader's rendezvous, and releases it.
type child struct {
	c        *proc.Child
	copied   <-chan struct{} // its piped output copied
	release  chan struct{}
	toLoaded chan struct{} // asks the tracer goroutine to run it until its libraries are loaded
	result   chan error
	exec     *syscalls.Call // the execve that started it, read while held (execline.go)
	// hold, when set before run, keeps the command seized for its execs
	// (hold.go) instead of releasing it; its loop then reaps the command.
	hold *execHold
}

func startHeld(t probe.Target) (*child, error) {
	ch := &child{release: make(chan struct{}), toLoaded: make(chan struct{}), result: make(chan error, 1)}
	started := make(chan error, 1)
	go func() {
		// Never unlocked: the thread exits with the goroutine, so no other
		// goroutine inherits a thread that is (or was) someone's tracer.
		runtime.LockOSThread()
		c, err := proc.Start(proc.Command{Argv: t.Argv, Env: t.Env, Stdin: t.Stdin, Stdout: t.Stdout, Stderr: t.Stderr, Cred: t.Cred})
		if err != nil {
			started <- err
			return
		}
		ch.c = c
		if t.ProcessEvents {
			ch.exec = execCall(c.Pid, t.StrSize)
		}
		started <- nil
		for {
			select {
			case <-ch.toLoaded:
				ch.result <- c.RunToLoaded()
			case <-ch.release:
				if h := ch.hold; h != nil {
					err := h.start(c)
					ch.result <- err
					if err != nil {
						close(h.done)
						close(h.exit)
						return
					}
					h.loop()
					return
				}
				ch.result <- c.Release()
				return
			}
		}
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	ch.copied = ch.c.Output()
	return ch, nil
}

// holdUntilLoaded says whether t's command must run to the loader's
// rendezvous before its probes attach: a site is an IFUNC's resolver, or
// lies in a library. A library is mapped after probes attached at exec,
// and a probe the kernel refuses then is refused in silence (uprobe_mmap
// ignores the error): attached once it is mapped, the refusal is an error
// that names the probe.
func holdUntilLoaded(t probe.Target, sites []probe.Site) bool {
	exe, err := exec.LookPath(t.Argv[0])
	if err != nil {
		return false
	}
	est, err := os.Stat(exe)
	if err != nil {
		return false
	}
	for i := range sites {
		if sites[i].IFunc {
			return true
		}
		if st, err := os.Stat(sites[i].Object); err != nil || !os.SameFile(est, st) {
			return true
		}
	}
	return false
}

// resolveLoaded starts t's command and runs it until its libraries are
// loaded, where the loader has chosen every IFUNC's implementation, and
// resolves the probes again there: a probe on a resolver (libc's strlen,
// memcpy...) would fire once at load time and never for a call.
func resolveLoaded(t probe.Target) (*child, []probe.Site, error) {
	c, err := startHeld(t)
	if err != nil {
		return nil, nil, err
	}
	sites, err := func() ([]probe.Site, error) {
		if err := c.loaded(); err != nil {
			return nil, err
		}
		return t.Resolve(c.pid())
	}()
	if err != nil {
		c.kill()
		return nil, nil, err
	}
	return c, sites, nil
}

func (c *child) pid() int { return c.c.Pid }

// loaded runs the child from its exec trap to the loader's rendezvous
// (proc.Child.RunToLoaded) and holds it there.
func (c *child) loaded() error {
	c.toLoaded <- struct{}{}
	return <-c.result
}

// run lets the child go.
func (c *child) run() error {
	close(c.release)
	return <-c.result
}

// kill ends a child that is still held or running, and reaps it.
func (c *child) kill() {
	c.c.Kill()
	select {
	case <-c.release:
	default:
		close(c.release)
		<-c.result
	}
}

// wait waits for the released child to exit and its output to be copied,
// and returns its shell-style status.
func (c *child) wait() (int, error) {
	if c.hold != nil {
		// Its tracer's loop reaps it: a wait from here would take the
		// loop's ptrace stops.
		ws, ok := <-c.hold.exit
		<-c.copied
		switch {
		case !ok:
			return 0, errors.New("the command was let go before it exited")
		case ws.Signaled():
			return 128 + int(ws.Signal()), nil
		}
		return ws.ExitStatus(), nil
	}
	code, err := c.c.Wait()
	<-c.copied
	return code, err
}
