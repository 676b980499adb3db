//go:build linux && amd64

package main

import (
	"context"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// endSignals are the catchable signals whose default action would end
// utap: each ends the trace instead, so that every probe is removed and
// every process detached before utap exits. A tracer killed with its
// breakpoints in kills its tracee at the next hit (SIGTRAP). SIGPROF is
// not among them: Go's runtime takes it for profiling and ignores it
// otherwise, so it never ends utap.
var endSignals = []os.Signal{
	syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGPIPE, syscall.SIGALRM,
	syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGXCPU, syscall.SIGXFSZ, syscall.SIGVTALRM,
	syscall.SIGSTKFLT, syscall.SIGIO, syscall.SIGPWR, syscall.SIGSYS, syscall.SIGABRT, syscall.SIGTRAP,
}

// interruptible returns a context that any of endSignals ends, and a func
// telling which signal did (0: none).
//
// In run mode the command shares utap's terminal and process group, so a
// Ctrl-C reaches it too: the first SIGINT is left to the command, which
// handles it (or dies of it) as it would untraced, and the trace ends when
// it exits. A second Ctrl-C, or any other of the signals, ends the trace at
// once: every probe is removed and the command runs on, untraced.
//
// The signals stay caught until utap exits: one arriving while probes are
// being removed must not kill utap half-way. Caught, SIGPIPE no longer
// kills utap on a closed output either; the write fails instead, and that
// ends the trace too (see trace). A SIGPIPE of a closed stderr, where
// -v's and the warnings' lines go, does not: a trace going to -o FILE
// must not be lost with them (`utap run -v -o FILE ... 2>&1 | head`).
func interruptible(runMode bool) (context.Context, func() syscall.Signal) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, caught()...)
	var got atomic.Int32
	go func() {
		interrupts := 0
		for sig := range ch {
			if sig == syscall.SIGPIPE && stderrClosed() {
				continue
			}
			if sig == os.Interrupt && runMode && interrupts == 0 {
				interrupts++
				continue
			}
			got.CompareAndSwap(0, int32(sig.(syscall.Signal)))
			cancel()
		}
	}()
	return ctx, func() syscall.Signal { return syscall.Signal(got.Load()) }
}

// stderrClosed says whether utap's stderr is a pipe or socket nobody
// reads any more (poll's POLLERR): a SIGPIPE then came of a line
// written there, not of a kill.
func stderrClosed() bool {
	fds := []unix.PollFd{{Fd: 2, Events: unix.POLLOUT}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n > 0 && fds[0].Revents&unix.POLLERR != 0
}
