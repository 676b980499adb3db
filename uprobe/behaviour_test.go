//go:build linux && amd64

package uprobe

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/probe"
)

func TestConditionInKernel(t *testing.T) {
	need.Uprobes(t)
	bin := fixture.C(t, "et_work.c")
	// arg1*2 + arg2 > 10
	cond := &probe.Binary{Op: probe.OpGt, T: probe.S64,
		X: &probe.Binary{Op: probe.OpAdd, T: probe.U64,
			X: &probe.Binary{Op: probe.OpMul, T: probe.U64, X: arg(1), Y: &probe.Const{Val: 2}},
			Y: arg(2)},
		Y: &probe.Const{Val: 10}}
	spec := &probe.Spec{Text: "work if arg1*2+arg2 > 10", Symbol: "work", Fetches: fetches(arg(1), arg(2)), Cond: cond}
	strSpec := &probe.Spec{Text: `greet if str(arg1) == "world"`, Symbol: "greet", Fetches: fetches(arg(2)),
		Cond: &probe.Binary{Op: probe.OpEq, T: probe.S64, X: &probe.StrOf{Addr: arg(1)}, Y: &probe.StrLit{Val: "world"}}}
	faultSpec := &probe.Spec{Text: "peek if *arg1 == 42 || 1", Symbol: "peek", Fetches: fetches(arg(2)),
		Cond: &probe.Binary{Op: probe.OpEq, T: probe.S64, X: &probe.Deref{T: probe.S64, Addr: arg(1)}, Y: &probe.Const{Val: 42}}}
	sites := []probe.Site{funcSite(t, bin, "work", 0, spec), funcSite(t, bin, "greet", 0, strSpec), funcSite(t, bin, "peek", 0, faultSpec)}
	c, res := run(t, &Engine{}, probe.Target{Argv: []string{bin, "args"}, Stdout: &bytes.Buffer{}}, sites)
	var got []string
	for _, ev := range c.evs {
		s := ev.Func
		for _, a := range ev.Args {
			s += " " + itoa(a.Int)
		}
		got = append(got, s)
	}
	want := "work 5 6,work 4 3,greet 8,peek 2"
	if strings.Join(got, ",") != want || res.Lost != 0 {
		t.Fatalf("got %q (lost %d), want %q", got, res.Lost, want)
	}
}

func TestExactCountThreads(t *testing.T) {
	need.Uprobes(t)
	bin := fixture.C(t, "et_work.c")
	spec := &probe.Spec{Text: "work", Symbol: "work", Fetches: fetches(arg(1))}
	c, res := run(t, &Engine{RingSize: 32 << 20}, probe.Target{Argv: []string{bin, "threads", "100000", "8"}},
		[]probe.Site{funcSite(t, bin, "work", 0, spec)})
	if res.Lost != 0 || c.n != 800000 {
		t.Fatalf("%d events, %d lost; want 800000, 0 lost", c.n, res.Lost)
	}
}

func TestRunModeExitStatus(t *testing.T) {
	need.Uprobes(t)
	bin := fixture.C(t, "et_work.c")
	spec := &probe.Spec{Text: "work", Symbol: "work"}
	for _, tc := range []struct {
		args   []string
		follow bool
		events int
		code   int
		out    string
	}{
		{[]string{"fork"}, false, 2, 7, "fork done 0\n"},
		{[]string{"fork"}, true, 3, 7, "fork done 0\n"},
		{[]string{"kill"}, false, 1, 128 + 9, ""},
		{[]string{"orphan"}, false, 1, 0, ""},
		{[]string{"orphan"}, true, 2, 0, ""},
	} {
		var out bytes.Buffer
		c, res := run(t, &Engine{}, probe.Target{Argv: append([]string{bin}, tc.args...), Stdout: &out, Follow: tc.follow},
			[]probe.Site{funcSite(t, bin, "work", 0, spec)})
		if c.n != tc.events || res.ExitCode != tc.code || out.String() != tc.out {
			t.Errorf("%v follow=%v: %d events, exit %d, output %q; want %d, %d, %q",
				tc.args, tc.follow, c.n, res.ExitCode, out.String(), tc.events, tc.code, tc.out)
		}
		if tc.follow && c.n == 3 && c.evs[1].PID == c.evs[0].PID {
			t.Errorf("the child's event has the parent's pid %d", c.evs[0].PID)
		}
	}
}

func TestAttachThenDetach(t *testing.T) {
	need.Uprobes(t)
	bin := fixture.C(t, "et_work.c")
	cmd := startReady(t, bin, "loop")
	spec := &probe.Spec{Text: "work", Symbol: "work", Fetches: fetches(arg(1))}
	ctx, cancel := context.WithCancel(context.Background())
	c := &collector{}
	done := make(chan error, 1)
	go func() {
		_, err := (&Engine{}).Trace(ctx, probe.Target{PIDs: []int{cmd.Process.Pid}}, []probe.Site{funcSite(t, bin, "work", 0, spec)}, c.emit)
		done <- err
	}()
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		c.mu.Lock()
		n := c.n
		c.mu.Unlock()
		if n >= 5 {
			break
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("only %d events in 10s", n)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	var ws syscall.WaitStatus
	if pid, _ := syscall.Wait4(cmd.Process.Pid, &ws, syscall.WNOHANG, nil); pid != 0 {
		t.Fatalf("the traced process ended: %v", ws)
	}
	assertNothingLeft(t, bin)
}

// assertNothingLeft checks no uprobe of bin is registered in tracefs and no
// program of ours is still loaded.
func assertNothingLeft(t *testing.T, bin string) {
	t.Helper()
	if b, err := os.ReadFile("/sys/kernel/tracing/uprobe_events"); err == nil && bytes.Contains(b, []byte(bin)) {
		t.Errorf("uprobe_events still lists %s:\n%s", bin, b)
	}
	// Our process must hold no BPF object or perf event any more. (Looking
	// at every loaded program instead would see other utap runs on the
	// machine, such as the compare tests'.)
	fds, _ := os.ReadDir("/proc/self/fd")
	for _, fd := range fds {
		target, err := os.Readlink("/proc/self/fd/" + fd.Name())
		if err != nil {
			continue
		}
		for _, kind := range []string{"bpf-prog", "bpf-link", "bpf-map", "[perf_event]"} {
			if strings.Contains(target, kind) {
				t.Errorf("fd %s (%s) is still open after Trace returned", fd.Name(), target)
			}
		}
	}
}

func TestRefusals(t *testing.T) {
	for _, tc := range []struct {
		code []byte
		want string
	}{
		{[]byte{0xf0, 0x48, 0x83, 0x05, 0x10, 0x00, 0x00, 0x00, 0x01}, "lock-prefixed"},
		{[]byte{0xf0, 0x48, 0x0f, 0xb1, 0x0d, 0x10, 0x00, 0x00, 0x00}, "lock-prefixed"},
		{[]byte{0xc5, 0xf1, 0xd4, 0x15, 0x10, 0x00, 0x00, 0x00}, "VEX/EVEX rip-relative"},
		{[]byte{0xc4, 0xe1, 0xf9, 0x7e, 0xd1}, "as a branch"},
		{[]byte{0xc5, 0xfd, 0x74, 0x0f}, "as a branch"}, // vpcmpeqb ymm1, ymm0, [rdi]
		{[]byte{0xf0, 0x48, 0x83, 0x07, 0x01}, "lock-prefixed"},
		{[]byte{0x0f, 0x05}, "syscall"},
		{[]byte{0xf3, 0xa4}, "rep-prefixed string"},
		{[]byte{0xf3, 0x48, 0xab}, "rep-prefixed string"}, // rep stosq
	} {
		err := refuse(tc.code)
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "--backend ptrace") {
			t.Errorf("% x: %v", tc.code, err)
		}
	}
	for _, ok := range [][]byte{
		{0xc4, 0xe2, 0xc9, 0xf7, 0xc7},    // shlx rax, rdi, rsi
		{0x48, 0x8b, 0x05, 0x10, 0, 0, 0}, // mov rax, [rip+0x10]
		{0xc5, 0xf1, 0xd4, 0xd0},          // vpaddq xmm2, xmm1, xmm0
		{0xf3, 0x0f, 0x1e, 0xfa},          // endbr64
		{0x55},                            // push rbp
		{0xa4},                            // movsb without rep
		{0xf3, 0xc3},                      // rep ret
	} {
		if err := refuse(ok); err != nil {
			t.Errorf("% x refused: %v", ok, err)
		}
	}
}
