//go:build linux && amd64

package ptrace

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/probe"
)

// tallies returns a Tally trace's entry and return counts and the
// returns' durations' count.
func tallies(res probe.Result) (entries, returns, timed uint64) {
	for _, t := range res.Tallies {
		if t.Kind == probe.Return {
			returns += t.Hits
			for _, c := range t.Durations {
				timed += c
			}
		} else {
			entries += t.Hits
		}
	}
	return entries, returns, timed
}

// -c with durations in pads, eight threads on two CPUs: every call and
// return counted, exactly, whether the pads add per CPU in restartable
// sequences (glibc's rseq registration) or, glibc told not to register
// one, by locked adds.
func TestPadTimedTallyPerCPU(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "pt_count.c")
	for _, c := range []struct {
		name   string
		env    []string
		perCPU bool
	}{
		{"rseq", nil, true},
		{"no rseq", []string{"GLIBC_TUNABLES=glibc.pthread.rseq=0"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			sites := []probe.Site{siteAt(t, bin, "work", 0), retSite(t, bin, "work")}
			var said []string
			var mu sync.Mutex
			e := &Engine{}
			var out bytes.Buffer
			var st runStats
			e.stats = &st
			e.Verbose = func(s string) { mu.Lock(); said = append(said, s); mu.Unlock() }
			target := probe.Target{Argv: []string{bin, "8", "100000"}, Tally: true, Stdout: &out, Env: append(os.Environ(), c.env...)}
			res, err := e.Trace(context.Background(), target, sites, func(*probe.Event) {})
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != 0 || out.String() != "threads=8 iters=100000 total=40002400000\n" {
				t.Fatalf("exit %d, output %q", res.ExitCode, out.String())
			}
			entries, returns, timed := tallies(res)
			if st.pads != 1 || entries != 800000 || returns != 800000 || timed != 800000 || res.Lost != 0 {
				t.Fatalf("pads %d: %d entries, %d returns, %d timed, want 800000; lost %d", st.pads, entries, returns, timed, res.Lost)
			}
			perCPU := strings.Contains(strings.Join(said, "\n"), "tallies per CPU")
			if perCPU != c.perCPU {
				t.Fatalf("per-CPU tallies %v, want %v:\n%s", perCPU, c.perCPU, strings.Join(said, "\n"))
			}
		})
	}
}

// fork, vfork+exec and a thread under -c with durations in pads: each
// process's calls counted once, as many as the events a trace of the same
// run shows (a vfork child runs on its parent's thread block, its CPU
// number stale: the pads take the locked adds while it runs).
func TestPadTimedTallyLifecycle(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "pt_fork.c")
	for _, c := range []struct {
		mode   string
		follow bool
	}{
		{"fork", false}, {"fork", true}, {"vfork", true}, {"vfork", false}, {"clone", true},
	} {
		t.Run(fmt.Sprintf("%s/follow=%v", c.mode, c.follow), func(t *testing.T) {
			want, err := exec.Command(bin, c.mode).Output()
			if err != nil {
				t.Fatal(err)
			}
			sites := []probe.Site{siteAt(t, bin, "work", 0), retSite(t, bin, "work")}
			evs, _, _, _ := padRun(t, false, probe.Target{Argv: []string{bin, c.mode}, Follow: c.follow}, sites)
			calls := uint64(0)
			for _, e := range evs {
				if e.Kind == "entry" {
					calls++
				}
			}
			_, out, res, st := padRun(t, false, probe.Target{Argv: []string{bin, c.mode}, Follow: c.follow, Tally: true}, sites)
			if out != string(want) || res.ExitCode != 0 || st.pads == 0 {
				t.Fatalf("exit %d, output %q, want %q; pads %d", res.ExitCode, out, want, st.pads)
			}
			entries, returns, timed := tallies(res)
			if calls == 0 || entries != calls || returns != calls || timed != calls {
				t.Fatalf("%d entries, %d returns, %d timed; the trace shows %d calls", entries, returns, timed, calls)
			}
		})
	}
}

// Attach -c with durations to four threads calling the probed function
// as fast as they can, and detach as soon as the pads are in, ten times:
// threads caught inside a critical section are stepped out of it (the
// kernel aborts a section at each step: the pad goes on by its locked
// adds), and the process runs on with its code and maps as before.
func TestPadTimedTallyDetachHot(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "pt_count.c")
	pid, maps0, code0 := hotProcess(t, bin)
	sites := []probe.Site{siteAt(t, bin, "work", 0), retSite(t, bin, "work")}
	for i := range 10 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		var st runStats
		e := &Engine{stats: &st, Verbose: func(s string) {
			if strings.Contains(s, "in-process pad at") {
				cancel()
			}
		}}
		res, err := e.Trace(ctx, probe.Target{PIDs: []int{pid}, Tally: true}, sites, func(*probe.Event) {})
		timedOut := ctx.Err() == context.DeadlineExceeded
		cancel()
		if err != nil || timedOut {
			t.Fatalf("cycle %d: %v (timed out %v)", i, err, timedOut)
		}
		runsOn(t, i, pid, maps0, code0)
		entries, returns, _ := tallies(res)
		t.Logf("cycle %d: %d pads, %d entries, %d returns", i, st.pads, entries, returns)
	}
}
