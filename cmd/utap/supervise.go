//go:build linux && amd64

package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"github.com/utap/utap/internal/rescue"
	"golang.org/x/sys/unix"
)

// The process the user starts for run and attach is a supervisor: the trace
// runs in a child, the tracer, and the supervisor only waits for it and
// passes signals on. Killed, even by SIGKILL, the supervisor takes nothing
// with it: the kernel sends the tracer SIGTERM (PR_SET_PDEATHSIG), which
// ends the trace as any signal does — probes removed, processes detached,
// the command running on.
//
// Not the reverse (the user's process traces, a child watches it): a dead
// tracer leaves int3s and hijacked return addresses in its tracees, and the
// state needed to undo them (slots, shadow stacks) died with it. The
// tracer killed alone (SIGKILL, which it cannot catch: the OOM killer, a
// kill -9 of its pid), the supervisor takes its int3s out of the processes
// it traced (internal/rescue), which run on; what stays fatal is SIGKILL of
// both at once (pkill -9 utap) for a process with int3s in it.
const tracerEnv = "UTAP_TRACER_OF"

// isTracer says whether this process is the supervised tracer. Read once at
// start, and taken out of the environment so that the traced command's
// environment is the user's, as untraced.
var isTracer = func() bool {
	v, ok := os.LookupEnv(tracerEnv)
	os.Unsetenv(tracerEnv)
	if ok && v != strconv.Itoa(os.Getppid()) {
		os.Exit(1) // the supervisor is gone already: nothing to trace for
	}
	if err := rescue.Join(); err != nil {
		fmt.Fprintf(os.Stderr, "utap: %v; a kill of the tracer may kill the traced processes\n", err)
	}
	return ok
}()

// supervise runs this command line again as the tracer and returns its exit
// status as utap's.
func supervise() error {
	// PR_SET_PDEATHSIG fires when the thread that forked the child exits,
	// not the process: keep this goroutine on its thread for good.
	runtime.LockOSThread()
	// By its path, not /proc/self/exe: ps and pgrep then name it utap.
	exe, err := os.Executable()
	if err != nil {
		exe = "/proc/self/exe"
	}
	cmd := exec.Command(exe, os.Args[1:]...)
	cmd.Args[0] = os.Args[0]
	cmd.Env = append(os.Environ(), tracerEnv+"="+strconv.Itoa(os.Getpid()), ignoredEnviron())
	// The tracer lists its processes here (fd 3), for a rescue.
	table, terr := rescue.New()
	if terr == nil {
		cmd.ExtraFiles = []*os.File{table.File()}
		cmd.Env = append(cmd.Env, rescue.Env+"=3")
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}

	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, caught()...)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the tracer: %w", err)
	}
	if table != nil {
		table.OnTend = func(pids []int) {
			fmt.Fprintf(os.Stderr, "utap: the tracer died; pid %v runs utap's seccomp filter, whose calls fail untraced: utap traces it until it exits\n", pids)
		}
		table.Watch() // undoes at the tracer's death, before wait4 would tell
	}
	go forward(sigs, cmd.Process)
	err = cmd.Wait()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return fmt.Errorf("waiting for the tracer: %w", err)
	}
	ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
	switch {
	case ws.Signaled():
		fmt.Fprintf(os.Stderr, "utap: the tracer (pid %d) was killed by %v%s\n", cmd.Process.Pid, unix.SignalName(ws.Signal()), rescued(table))
		return exitError{128 + int(ws.Signal())}
	case ws.ExitStatus() != 0:
		return exitError{ws.ExitStatus()}
	}
	return nil
}

// rescued is what the supervisor did once the tracer died
// (rescue.Table.Rescue, run by the watch as the tracer started to exit,
// or here): its int3s taken out of the processes it traced, those that
// run utap's seccomp filter traced until they exit.
func rescued(table *rescue.Table) string {
	if table == nil {
		return "; probes it had in may kill their process at its next hit"
	}
	restored, tended, err := table.Rescue()
	var b strings.Builder
	n := 0
	for _, r := range restored {
		n += r.Bytes
		if r.Err != nil {
			fmt.Fprintf(&b, "\nutap: pid %d: %v: breakpoints left in it may kill it at their next hit", r.Pid, r.Err)
		}
	}
	if len(tended) > 0 && err != nil {
		fmt.Fprintf(&b, "\nutap: tracing pid %v in its place: %v", tended, err)
	}
	if len(restored) == 0 {
		return b.String()
	}
	return fmt.Sprintf("; its breakpoints taken out of %d traced process(es) (%d bytes), which run on%s", len(restored), n, b.String())
}

// forward passes the signals sent to the supervisor on to the tracer. A
// SIGINT or SIGQUIT from the terminal reaches the tracer (and, in run mode,
// the command) by itself, as they share the supervisor's process group:
// passed on too, one Ctrl-C would count twice.
func forward(sigs <-chan os.Signal, tracer *os.Process) {
	for sig := range sigs {
		if (sig == syscall.SIGINT || sig == syscall.SIGQUIT) && terminalForeground() {
			continue
		}
		tracer.Signal(sig)
	}
}

// terminalForeground says whether utap runs in its controlling terminal's
// foreground process group, where the terminal sends Ctrl-C and Ctrl-\.
func terminalForeground() bool {
	tty, err := os.Open("/dev/tty")
	if err != nil {
		return false // no controlling terminal: the signal came from kill
	}
	defer tty.Close()
	pgrp, err := unix.IoctlGetInt(int(tty.Fd()), unix.TIOCGPGRP)
	return err == nil && pgrp == unix.Getpgrp()
}
