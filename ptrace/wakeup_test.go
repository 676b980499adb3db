//go:build linux && amd64

package ptrace

import (
	"context"
	"encoding/binary"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/probe"
)

// cpuLatency reads the machine's PM QoS CPU latency target (µs).
func cpuLatency(t *testing.T) int32 {
	b, err := os.ReadFile("/dev/cpu_dma_latency")
	if err != nil || len(b) < 4 {
		t.Skipf("cannot read /dev/cpu_dma_latency: %v", err)
	}
	return int32(binary.LittleEndian.Uint32(b))
}

// TestFastWakeups: while stops come fast, idle CPUs are asked to poll
// (a latency target of 0); a slow trace, the end of a trace and
// SlowWakeups leave them alone.
func TestFastWakeups(t *testing.T) {
	need.Root(t)
	if v := cpuLatency(t); v != noLatencyLimit {
		t.Skipf("someone else holds a CPU latency request (%d µs)", v)
	}
	bin := fixture.C(t, "et_work.c")
	site := siteAt(t, bin, "work", 0)
	for _, c := range []struct {
		mode string
		slow bool
		want int32
	}{
		{"spin", false, 0},              // millions of calls a second
		{"loop", false, noLatencyLimit}, // a call every 2 ms
		{"spin", true, noLatencyLimit},
	} {
		cmd := exec.Command(bin, c.mode)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { cmd.Process.Kill(); cmd.Wait() }()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			// Breakpoints: a pad would make no stop to wake up for.
			_, err := (&Engine{SlowWakeups: c.slow, NoPads: true}).Trace(ctx, probe.Target{PIDs: []int{cmd.Process.Pid}},
				[]probe.Site{site}, func(*probe.Event) {})
			done <- err
		}()
		// Sampled for a second: under load, a window may miss the rate.
		got := int32(noLatencyLimit)
		for range 20 {
			time.Sleep(fastWindow / 2)
			if v := cpuLatency(t); v != noLatencyLimit {
				got = v
			}
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("%s: %v", c.mode, err)
		}
		if got != c.want {
			t.Errorf("%s, SlowWakeups %v: CPU latency target %d µs while tracing, want %d", c.mode, c.slow, got, c.want)
		}
		if v := cpuLatency(t); v != noLatencyLimit {
			t.Errorf("%s: CPU latency target %d µs after the trace", c.mode, v)
		}
	}
}
