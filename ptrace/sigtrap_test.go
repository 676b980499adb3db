//go:build linux && amd64

package ptrace

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/internal/proc"
	"github.com/utap/utap/probe"
)

// A program that blocks or ignores SIGTRAP around probed calls, then
// raises it, must behave as untraced: the breakpoints' forced SIGTRAPs
// reset its action and mask, and the engine puts them back. Run mode:
// the handler, the mask and SIG_IGN are all set after the probes went in.
func TestSigtrapBlockedOrIgnored(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "pt_sigtrap.c")
	for _, tc := range []struct {
		mode  string
		calls int
	}{{"block", 200}, {"ign", 200}, {"dfl", 200}, {"thread", 400}} {
		t.Run(tc.mode, func(t *testing.T) {
			want, err := exec.Command(bin, tc.mode, "200").Output()
			if err != nil {
				t.Fatalf("untraced: %v", err)
			}
			evs, out, res := run(t, false, []probe.Site{siteAt(t, bin, "work", 0)}, bin, tc.mode, "200")
			if out != string(want) || res.ExitCode != 0 {
				t.Fatalf("exit %d, output %q, want %q", res.ExitCode, out, want)
			}
			if len(evs) != tc.calls {
				t.Fatalf("%d events, want %d", len(evs), tc.calls)
			}
		})
	}
}

// Attached after the program set its handler and blocked SIGTRAP: the
// state is read when the probes go in, and put back at detach too.
func TestSigtrapBlockedAttach(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "pt_sigtrap.c")
	for _, mode := range []string{"block", "ign"} {
		t.Run(mode, func(t *testing.T) {
			want, err := exec.Command(bin, mode, "200").Output()
			if err != nil {
				t.Fatalf("untraced: %v", err)
			}
			cmd := exec.Command(bin, mode, "200", "wait")
			stdin, _ := cmd.StdinPipe()
			stdout, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			lines := bufio.NewScanner(stdout)
			if !lines.Scan() || lines.Text() != "ready" {
				t.Fatalf("fixture said %q", lines.Text())
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			n := 0
			done := make(chan error, 1)
			go func() {
				// Breakpoints: SIGTRAP's state matters only to traps.
				_, err := (&Engine{NoPads: true}).Trace(ctx, probe.Target{PIDs: []int{cmd.Process.Pid}},
					[]probe.Site{siteAt(t, bin, "work", 0)}, func(*probe.Event) { n++ })
				done <- err
			}()
			// Probes go in before Trace sends anything: wait for them by
			// polling the code for the int3.
			waitInt3(t, cmd.Process.Pid, bin, "work", done)
			stdin.Write([]byte("g"))
			var got []string
			for lines.Scan() {
				got = append(got, lines.Text())
			}
			if err := <-done; err != nil {
				t.Fatalf("Trace: %v", err)
			}
			// Its exit status went to the tracer (this process) while traced.
			if err := cmd.Wait(); err != nil && !errors.Is(err, unix.ECHILD) {
				t.Fatalf("traced: %v, output %q", err, got)
			}
			if out := strings.Join(got, "\n") + "\n"; out != string(want) || n != 200 {
				t.Fatalf("output %q (%d events), want %q (200)", out, n, want)
			}
		})
	}
}

// waitInt3 waits until fn's first byte in process pid is an int3.
func waitInt3(t *testing.T, pid int, bin, fn string, done <-chan error) {
	t.Helper()
	s := siteAt(t, bin, fn, 0)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		ms, err := readMaps(pid)
		if err == nil {
			for _, m := range ms {
				if m.Path == bin && s.FileOffset >= m.Offset && s.FileOffset < m.Offset+(m.End-m.Start) {
					var b [1]byte
					mem, err := proc.OpenMemory(pid)
					if err == nil {
						err = mem.ReadByMem(b[:], m.Start+s.FileOffset-m.Offset)
						mem.Close()
					}
					if err == nil && b[0] == 0xcc {
						return
					}
				}
			}
		}
		select {
		case err := <-done:
			st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
			t.Fatalf("Trace ended before the probes went in: %v\n%s", err, st)
		case <-time.After(5 * time.Millisecond):
		}
	}
	t.Fatal("probes never went in")
}
