//go:build linux && amd64

package ptrace

import (
	"context"
	"errors"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/probe"
)

func TestNoSuchPID(t *testing.T) {
	need.Root(t)
	_, err := (&Engine{}).Trace(context.Background(), probe.Target{PIDs: []int{1 << 30}}, nil, func(*probe.Event) {})
	if !errors.Is(err, ErrNoProcess) {
		t.Fatalf("err = %v, want ErrNoProcess", err)
	}
}

func TestAlreadyTraced(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "pt_loop.c")
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cmd := exec.Command(bin)
	cmd.SysProcAttr = &syscall.SysProcAttr{Ptrace: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	_, err := (&Engine{}).Trace(context.Background(), probe.Target{PIDs: []int{cmd.Process.Pid}}, nil, func(*probe.Event) {})
	if !errors.Is(err, ErrPermission) || !strings.Contains(err.Error(), "already traced by pid") {
		t.Fatalf("err = %v, want ErrPermission naming the tracer", err)
	}
}

func TestRefusedInstruction(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "pt_signals.c")
	sites := []probe.Site{siteAt(t, bin, "work", 0), siteAt(t, bin, "rawsys", 0)}
	_, err := (&Engine{}).Trace(context.Background(), probe.Target{Argv: []string{bin}}, sites, func(*probe.Event) {})
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "rawsys+0x0") {
		t.Fatalf("err = %v, want ErrRefused naming rawsys+0x0", err)
	}
	t.Log(err)
}
