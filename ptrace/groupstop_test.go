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
	"github.com/utap/utap/probe"
)

// A process stopped by SIGSTOP while its threads hit breakpoints is
// detached in its group-stop and, continued, runs on as if untraced: no
// int3 trap left pending kills it.
func TestDetachInGroupStop(t *testing.T) {
	need.Root(t)
	if os.Getenv("UTAP_PTRACE_GROUPSTOP") == "" {
		// Known bug, left open in issue 3's note: about 1 run in 10, a
		// SIGSTOP sent at the very moment of detach is lost and the
		// process runs on instead of stopping. Hangs and stray SIGTRAPs
		// of this test are fixed; set UTAP_PTRACE_GROUPSTOP=1 to run it.
		t.Skip("known bug: a SIGSTOP racing detach is lost about 1 run in 10 (UTAP_PTRACE_GROUPSTOP=1 runs it)")
	}
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
		time.Sleep(10 * time.Millisecond)
		if s, _ := statusField(pid, "State"); !strings.HasPrefix(s, "T") {
			t.Errorf("run %d: state %q after detach, want stopped", i, s)
		}
		unix.Kill(pid, unix.SIGCONT)
		if err := cmd.Wait(); err != nil || out.String() != "threads=4 iters=50000000 total=5000000200000000\n" {
			t.Fatalf("run %d: %v, output %q", i, err, out.String())
		}
	}
	t.Logf("%d late traps taken", late)
}
