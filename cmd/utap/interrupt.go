//go:build linux && amd64

package main

import (
	"context"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
)

// interruptible returns a context that SIGINT and SIGTERM end, and a func
// telling which signal did.
//
// In run mode the command shares utap's terminal and process group, so a
// Ctrl-C reaches it too: the first SIGINT is left to the command, which
// handles it (or dies of it) as it would untraced, and the trace ends when
// it exits. A second Ctrl-C, or SIGTERM, ends the trace at once: every
// probe is removed and the command runs on, untraced.
func interruptible(runMode bool) (context.Context, func() syscall.Signal) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	var got atomic.Int32
	go func() {
		interrupts := 0
		for sig := range ch {
			if sig == os.Interrupt && runMode && interrupts == 0 {
				interrupts++
				continue
			}
			got.Store(int32(sig.(syscall.Signal)))
			signal.Stop(ch)
			cancel()
			return
		}
	}()
	return ctx, func() syscall.Signal { return syscall.Signal(got.Load()) }
}
