//go:build linux && amd64

package ptrace

import (
	"bytes"
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/probe"
)

// TestAlarmEveryInstruction: a periodic SIGALRM (every 20 µs to 2 ms) at a
// program probed on every instruction of its hot function. Signals that
// came while one was held for a slot step used to be re-sent and dequeued
// before the slot ran, for ever: the trace hung. It must finish, with the
// program's output as untraced and every call seen, and each alarm held
// must come with its own siginfo (it came as the tracer's SI_USER).
func TestAlarmEveryInstruction(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "pt_alarm.c", "-O1")
	var sites []probe.Site
	for _, off := range funcInsns(t, bin, "hot") {
		s := siteAt(t, bin, "hot", off)
		s.Probe = len(sites)
		sites = append(sites, s)
	}
	const calls = 5000
	for _, usec := range []string{"20", "200", "2000"} {
		argv := []string{bin, usec, "5000"}
		want, err := exec.Command(argv[0], argv[1:]...).Output()
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		var out, errOut bytes.Buffer
		entries := 0
		res, err := (&Engine{}).Trace(ctx, probe.Target{Argv: argv, Stdout: &out, Stderr: &errOut}, sites, func(e *probe.Event) {
			if e.ProbeIndex == 0 {
				entries++
			}
		})
		expired := ctx.Err() != nil
		cancel()
		switch {
		case err != nil:
			t.Fatalf("every %s µs: %v", usec, err)
		case expired:
			t.Fatalf("every %s µs: still running after two minutes (%d calls seen)", usec, entries)
		case res.ExitCode != 0 || out.String() != string(want):
			t.Errorf("every %s µs: exit %d, output %q; untraced %q", usec, res.ExitCode, out.String(), want)
		case entries != calls:
			t.Errorf("every %s µs: %d calls seen, want %d", usec, entries, calls)
		case !bytes.Contains(errOut.Bytes(), []byte(" 0 with another siginfo")):
			t.Errorf("every %s µs: %s", usec, bytes.TrimSpace(errOut.Bytes()))
		}
		t.Logf("every %s µs: %s", usec, bytes.TrimSpace(errOut.Bytes()))
	}
}
