//go:build linux && amd64

package ptrace

import (
	"bufio"
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/probe"
)

func TestRefuseRseqCriticalSection(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "pt_rseq.c", "-O2")
	cs := siteAt(t, bin, "rseq_start", 0)
	_, err := (&Engine{}).Trace(context.Background(), probe.Target{Argv: []string{bin}, Stdout: &strings.Builder{}}, []probe.Site{cs}, func(*probe.Event) {})
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "rseq") {
		t.Fatalf("probe in the critical section: %v, want a refusal", err)
	}
	t.Log(err)
	// Just past the section is fine.
	after := siteAt(t, bin, "in_cs", 7) // rseq_end: mov, add are 7 bytes
	if cs.Addr != after.FuncAddr {
		t.Fatalf("rseq_start %#x is not in_cs %#x", cs.Addr, after.FuncAddr)
	}
	evs, out, res := run(t, false, []probe.Site{after}, bin)
	if out != "s=55\n" || res.ExitCode != 0 || len(evs) != 10 {
		t.Fatalf("after the section: exit %d, output %q, %d events", res.ExitCode, out, len(evs))
	}
}

func TestRefuseWritableCode(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "pt_rseq.c", "-O2")
	cmd := exec.Command(bin, "wx")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	if l, _ := bufio.NewReader(stdout).ReadString('\n'); l != "ready\n" {
		t.Fatalf("fixture said %q", l)
	}
	site := siteAt(t, bin, "in_cs", 7) // rseq_end: outside the critical section
	_, err := (&Engine{}).Trace(context.Background(), probe.Target{PIDs: []int{cmd.Process.Pid}}, []probe.Site{site}, func(*probe.Event) {})
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "writable") {
		t.Fatalf("probe in rwx code: %v, want a refusal", err)
	}
	t.Log(err)
}
