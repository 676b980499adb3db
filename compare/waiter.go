//go:build linux && amd64

package compare

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// waiter is the workload in ModeWait, the process the attach rows attach
// to and detach from, again and again. When told to go on, it calls every
// probed function once and prints its checksum: a probe left behind, or an
// instruction restored wrong, shows there.
type waiter struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   bytes.Buffer
	calls int
}

// waiterCalls is how many calls of the target the waiter makes at the end.
const waiterCalls = 1000

func startWaiter(w *Workload) (*waiter, error) {
	wt := &waiter{calls: waiterCalls}
	wt.cmd = exec.Command(w.Exe, w.Args(strconv.Itoa(wt.calls), 1, ModeWait)...)
	wt.cmd.Stdout = &wt.out
	wt.cmd.Stderr = &wt.out
	wt.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var err error
	if wt.stdin, err = wt.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	if err := wt.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the waiting workload: %w", err)
	}
	return wt, nil
}

func (wt *waiter) pid() int { return wt.cmd.Process.Pid }

// check says whether a tool that has exited left the waiter stopped or
// still traced.
func (wt *waiter) check() error {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", wt.pid()))
	if err != nil {
		return fmt.Errorf("the attached process is gone: %w", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(l, ":")
		v = strings.TrimSpace(v)
		switch {
		case k == "State" && (strings.HasPrefix(v, "T") || strings.HasPrefix(v, "t") || strings.HasPrefix(v, "Z")):
			return fmt.Errorf("the tool left the attached process in state %s", v)
		case k == "TracerPid" && v != "0":
			return fmt.Errorf("the attached process is still traced by pid %s", v)
		}
	}
	return nil
}

// errBroken says the attached process did not run on correctly after the
// tool detached.
var errBroken = errors.New("the process misbehaved after the tool detached")

// finish lets the waiter run its calls and checks its exit and checksum.
func (wt *waiter) finish(timeout time.Duration) error {
	wt.stdin.Write([]byte("go\n"))
	wt.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- wt.cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(timeout):
		syscall.Kill(-wt.pid(), syscall.SIGKILL)
		<-done
		err = fmt.Errorf("did not finish in %v", timeout)
	}
	out := strings.TrimSpace(wt.out.String())
	if err != nil {
		return fmt.Errorf("%w: %v %s", errBroken, err, out)
	}
	if want := strconv.FormatInt(Checksum(wt.calls), 10); !strings.Contains(out, want) {
		return fmt.Errorf("%w: printed %q, want checksum %s", errBroken, out, want)
	}
	return nil
}

// kill ends a waiter that will not be checked.
func (wt *waiter) kill() {
	if wt.cmd.ProcessState == nil {
		syscall.Kill(-wt.pid(), syscall.SIGKILL)
		wt.cmd.Wait()
	}
}
