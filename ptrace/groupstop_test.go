//go:build linux && amd64

package ptrace

import (
	"context"
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

// A process stopped by SIGSTOP while its threads hit breakpoints is
// detached in its group-stop and, continued, runs on as if untraced: no
// int3 trap left pending kills it.
func TestDetachInGroupStop(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "pt_count.c")
	sites := []probe.Site{siteAt(t, bin, "work", 0), retSite(t, bin, "work")}
	late := 0
	for i := range 4 {
		cmd := exec.Command(bin, "4", "50000000")
		var out strings.Builder
		cmd.Stdout = &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		pid := cmd.Process.Pid
		// Attach once the threads exist, so that every run has
		// threads in the loop to hit breakpoints.
		for range 200 {
			if ents, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid)); len(ents) == 5 {
				break
			}
			time.Sleep(time.Millisecond)
		}
		ctx, cancel := context.WithCancel(context.Background())
		n := 0
		var st runStats
		_, err := (&Engine{stats: &st}).Trace(ctx, probe.Target{PIDs: []int{pid}}, sites, func(*probe.Event) {
			if n++; n == 3000 {
				unix.Kill(pid, unix.SIGSTOP)
				cancel()
			}
		})
		if err != nil {
			cmd.Process.Kill()
			t.Fatal(err)
		}
		late += st.lateTraps
		// The thread that takes the SIGSTOP may wait for a CPU a while
		// (the tracee's threads spin on both): poll, don't sleep once.
		s := ""
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if s, _ = proc.StatusField(pid, "State"); strings.HasPrefix(s, "T") {
				break
			}
		}
		if !strings.HasPrefix(s, "T") {
			t.Errorf("run %d: state %q 5 s after detach, want stopped", i, s)
		}
		unix.Kill(pid, unix.SIGCONT)
		if err := cmd.Wait(); err != nil || out.String() != "threads=4 iters=50000000 total=5000000200000000\n" {
			t.Fatalf("run %d: %v, output %q", i, err, out.String())
		}
	}
	t.Logf("%d late traps taken", late)
}
