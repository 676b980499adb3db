//go:build linux && amd64

package ptrace

import (
	"bufio"
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/probe"
)

// A signal delivered with rip on the return trampoline (the hijacked
// return address) must not leave the trampoline in the signal frame: the
// engine detaches while the handler runs, the area is unmapped, and the
// handler's sigreturn must land in the caller, with the return reported.
func TestSignalAtTrampoline(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "pt_sigtramp.c")
	cmd := exec.Command(bin)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan string, 8)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	line := func() string {
		select {
		case l := <-lines:
			return l
		case <-time.After(10 * time.Second):
			t.Fatal("no output from the fixture")
			return ""
		}
	}
	if l := line(); l != "ready" {
		t.Fatalf("fixture said %q", l)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ticked := make(chan struct{})
	var rets []probe.Event
	done := make(chan error, 1)
	go func() {
		_, err := (&Engine{}).Trace(ctx, probe.Target{PIDs: []int{cmd.Process.Pid}},
			[]probe.Site{siteAt(t, bin, "tick", 0), retSite(t, bin, "ret42")}, func(ev *probe.Event) {
				if ev.Func == "tick" {
					select {
					case <-ticked:
					default:
						close(ticked)
					}
					return
				}
				rets = append(rets, *ev)
			})
		done <- err
	}()
	select {
	case <-ticked: // probes are in
	case err := <-done:
		t.Fatalf("Trace: %v", err)
	}
	stdin.Write([]byte("g"))
	if l := line(); l != "handler" {
		t.Fatalf("fixture said %q, want handler", l)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Trace: %v", err)
	}
	stdin.Write([]byte("h"))
	var rest []string
	for l := range lines {
		rest = append(rest, l)
	}
	if err := cmd.Wait(); err != nil || strings.Join(rest, "\n") != "r=42" {
		t.Fatalf("after detach: %v, output %q", err, rest)
	}
	if len(rets) != 1 || rets[0].Ret == nil || rets[0].Ret.Int != 42 {
		t.Fatalf("return events %+v, want one with 42", rets)
	}
}
