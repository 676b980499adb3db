//go:build linux && amd64

package ptrace

import (
	"context"
	"io"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/probe"
)

// BenchmarkSysGetppid times `-e trace=getppid` on a loop of getppid
// (sys_pad.c) in-process (pads) and on the stop path (stops), and the
// loop untraced, each as the slope between two runs (fork, exec, install
// and exit cancel out): µs per call, and µs per call above the untraced
// call (the target: 0.2 µs in-process).
func BenchmarkSysGetppid(b *testing.B) {
	need.Root(b)
	bin := fixture.C(b, "sys_pad.c")
	const n1, n2 = 20000, 200000
	untraced := func(n int) time.Duration {
		start := time.Now()
		if err := exec.Command(bin, "loop", strconv.Itoa(n)).Run(); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	traced := func(noPads bool, n int) time.Duration {
		events := 0
		start := time.Now()
		_, err := (&Engine{NoPads: noPads}).Trace(context.Background(),
			probe.Target{Argv: []string{bin, "loop", strconv.Itoa(n)}, Stdout: io.Discard, Borrow: true},
			sysSites(b, "syscall:getppid", 0), func(ev *probe.Event) {
				if ev.Kind == "return" {
					events++
				}
			})
		if err != nil || events != n {
			b.Fatalf("%v: %d calls seen of %d", err, events, n)
		}
		return time.Since(start)
	}
	slope := func(run func(int) time.Duration) float64 {
		return float64(run(n2)-run(n1)) / float64(n2-n1) / 1e3
	}
	for _, c := range []struct {
		name   string
		noPads bool
	}{{"pads", false}, {"stops", true}} {
		b.Run(c.name, func(b *testing.B) {
			var us, above float64
			for range b.N {
				base := slope(untraced)
				t := slope(func(n int) time.Duration { return traced(c.noPads, n) })
				us += t
				above += t - base
			}
			b.ReportMetric(us/float64(b.N), "µs/call")
			b.ReportMetric(above/float64(b.N), "µs-above-untraced/call")
		})
	}
}
