package uprobe

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"

	"github.com/utap/utap/elfsym"
	"github.com/utap/utap/probe"
	"golang.org/x/sys/unix"
)

// child is a command held at its exec trap until its probes are in: it is
// started traced (PTRACE_TRACEME), so the kernel stops it right after
// execve, before its first instruction, and released with PTRACE_DETACH.
// ptrace only answers the thread that is the tracer, so one locked
// goroutine starts, waits for and detaches the child.
type child struct {
	cmd      *exec.Cmd
	release  chan struct{}
	toLoaded chan struct{} // asks the tracer goroutine to run it until its libraries are loaded
	result   chan error
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
	c := &child{cmd: cmd, release: make(chan struct{}), toLoaded: make(chan struct{}), result: make(chan error, 1)}
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
		for {
			select {
			case <-c.toLoaded:
				c.result <- runToLoaded(pid)
			case <-c.release:
				c.result <- unix.PtraceDetach(pid)
				return
			}
		}
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

// hasIFunc says whether a site is an IFUNC's resolver.
func hasIFunc(sites []probe.Site) bool {
	for i := range sites {
		if sites[i].IFunc {
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
		sites, err := t.Resolve(c.pid())
		if err != nil {
			return nil, err
		}
		for i := range sites {
			if err := checkSite(&sites[i]); err != nil {
				return nil, err
			}
		}
		return sites, nil
	}()
	if err != nil {
		c.kill()
		return nil, nil, err
	}
	return c, sites, nil
}

func (c *child) pid() int { return c.cmd.Process.Pid }

// loaded runs the child from its exec trap to the point where the loader
// has mapped and relocated every library (IFUNC implementations chosen)
// and no constructor has run, and holds it there: the loader's
// rendezvous (elfsym.Rendezvous), or the entry point of a program loaded
// without one.
func (c *child) loaded() error {
	c.toLoaded <- struct{}{}
	if err := <-c.result; err != nil {
		return fmt.Errorf("running %s until its libraries are loaded: %w", c.cmd.Path, err)
	}
	return nil
}

// runToLoaded does loaded from the tracer thread: a temporary int3, the
// loader's calls made before its link map is complete completed for it
// (the hook only returns), the program's own signals passed on.
func runToLoaded(pid int) error {
	var rv *elfsym.Rendezvous // nil when stopping at the entry point
	stop, err := elfsym.Entry(pid)
	if err != nil {
		return err
	}
	if r, err := elfsym.LoaderRendezvous(pid); err == nil && r.BrkReturns {
		stop, rv = r.Brk, &r
	}
	mem, err := os.OpenFile(fmt.Sprintf("/proc/%d/mem", pid), os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer mem.Close()
	var orig [1]byte
	if _, err := mem.ReadAt(orig[:], int64(stop)); err != nil {
		return err
	}
	if _, err := mem.WriteAt([]byte{0xcc}, int64(stop)); err != nil {
		return err
	}
	sig := 0
	for {
		if err := unix.PtraceCont(pid, sig); err != nil {
			return err
		}
		var ws unix.WaitStatus
		if _, err := unix.Wait4(pid, &ws, unix.WALL, nil); err != nil {
			return err
		}
		if !ws.Stopped() {
			return fmt.Errorf("it ended first (status %#x)", ws)
		}
		sig = int(ws.StopSignal())
		var regs unix.PtraceRegs
		if sig != int(unix.SIGTRAP) || unix.PtraceGetRegs(pid, &regs) != nil || regs.Rip != stop+1 {
			continue // the program's own signal: delivered
		}
		sig = 0
		if rv != nil {
			read := func(b []byte, addr uint64) error { _, err := mem.ReadAt(b, int64(addr)); return err }
			passed, err := rv.PassIncomplete(read, &regs)
			if err != nil {
				return err
			}
			if passed {
				if err := unix.PtraceSetRegs(pid, &regs); err != nil {
					return err
				}
				continue
			}
		}
		if _, err := mem.WriteAt(orig[:], int64(stop)); err != nil {
			return err
		}
		regs.Rip = stop
		return unix.PtraceSetRegs(pid, &regs)
	}
}

// run lets the child go.
func (c *child) run() error {
	close(c.release)
	if err := <-c.result; err != nil {
		return fmt.Errorf("releasing pid %d: %w", c.pid(), err)
	}
	return nil
}

// kill ends a child that is still held or running, and reaps it.
func (c *child) kill() {
	c.cmd.Process.Kill()
	select {
	case <-c.release:
	default:
		close(c.release)
		<-c.result
	}
	c.cmd.Wait()
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
