//go:build linux && amd64

package ptrace

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/internal/syscalls"
	"github.com/utap/utap/probe"
)

// sysSites makes the sites of one syscall spec, as the CLI does.
func sysSites(t testing.TB, text string, probeIdx int) []probe.Site {
	t.Helper()
	spec, err := probe.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	infos, err := syscalls.Select(spec.Symbol)
	if err != nil {
		t.Fatal(err)
	}
	var sites []probe.Site
	for _, in := range infos {
		s := probe.Site{Spec: spec, Probe: probeIdx, Func: in.Name, Syscall: true, SyscallNr: in.Nr}
		for _, a := range in.Args {
			s.Params = append(s.Params, a.Name)
		}
		if err := s.Bind(); err != nil {
			t.Fatal(err)
		}
		sites = append(sites, s)
	}
	return sites
}

// captured is the memory an event's call captured for argument arg.
func captured(e *probe.Event, arg int, exit bool) []byte {
	side := e.Sys.Entry
	if exit {
		side = e.Sys.Exit
	}
	for i, c := range syscalls.Lookup(e.Sys.Nr).Captures {
		if c.Arg == arg && c.Exit == exit && i < len(side) {
			return side[i]
		}
	}
	return nil
}

func TestSyscallRunEvents(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "sys_calls.c")
	sites := append(sysSites(t, "syscall:openat", 0), sysSites(t, "syscall:read", 1)...)
	sites = append(sites, sysSites(t, "syscall:openat if ret < 0", 2)...)
	evs, out, res := run(t, true, sites, bin)
	if res.ExitCode != 0 || out != "done 3\n" {
		t.Fatalf("exit %d, output %q", res.ExitCode, out)
	}
	var hostname, read, failed bool
	entries := 0
	for _, e := range evs {
		if e.Kind == "entry" {
			entries++
		}
		if e.Kind != "return" || e.Sys == nil {
			continue
		}
		c := e.Sys
		line := syscalls.Line(c, &syscalls.Options{StrSize: 32})
		switch e.Func {
		case "openat":
			if strings.Contains(line, `"/etc/hostname", O_RDONLY|O_CLOEXEC) = `) && c.Ret >= 0 && e.ProbeIndex == 0 {
				hostname = true
			}
		case "read":
			// In-process (glibc's read takes a pad) the call has no
			// duration: -T, -r, -c and -C keep system calls on stops.
			if c.Ret > 0 && len(captured(e, 1, true)) == int(c.Ret) {
				read = true
			}
		}
		if e.ProbeIndex == 2 {
			if c.Ret >= 0 {
				t.Errorf("%s: its condition is ret < 0", line)
			}
			failed = failed || strings.Contains(line, `"/utap-nonexistent/file", O_RDONLY) = -1 E`)
		}
	}
	if !hostname || !read || !failed || entries == 0 {
		t.Errorf("openat of /etc/hostname %v, read with its buffer %v, failed open %v, entry events %d", hostname, read, failed, entries)
	}
}

// TestSyscallFilter: without pads, run mode's seccomp filter stops only
// the probed call, and with --no-seccomp every call stops; with pads and
// traps (padsystrap.go), the default, not even the probed call stops (it
// is made in-process), with or without --no-seccomp.
func TestSyscallFilter(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "pt_sys.c")
	const n = 2000
	for _, c := range []struct {
		name               string
		noFilter, noPads   bool
		minStops, maxStops int64
	}{
		// A seccomp stop and an exit stop per getppid.
		{"filter", false, true, 2 * n, 2*n + 500},
		// Two stops for every one of the 11 calls a round.
		{"no filter", true, true, 20 * n, 1 << 40},
		// Pads and traps (padsystrap.go), the default: the stops of the
		// loader's calls before they go in, of their placing, of the
		// traps of the rounds' calls whose number is not static (if
		// any). No filter: the program writes no code.
		{"pads", false, false, 0, 500},
		{"no filter+pads", true, false, 0, 500},
	} {
		e := &Engine{NoSeccomp: c.noFilter, NoPads: c.noPads}
		getppids(t, c.name, e, "2000\n", n, c.minStops, c.maxStops, bin, "mix", "2000")
	}
}

// getppids runs argv under e with getppid probed, and wants it to exit 0
// printing out, n getppid calls seen returning, and minStops to maxStops
// ptrace stops.
func getppids(t *testing.T, name string, e *Engine, out string, n int, minStops, maxStops int64, argv ...string) {
	t.Helper()
	var st runStats
	var stdout bytes.Buffer
	count := 0
	e.stats = &st
	res, err := e.Trace(context.Background(), probe.Target{Argv: argv, Stdout: &stdout},
		sysSites(t, "syscall:getppid", 0), func(ev *probe.Event) {
			if ev.Kind == "return" && ev.Func == "getppid" && ev.Sys.Ret > 0 {
				count++
			}
		})
	if err != nil || res.ExitCode != 0 || stdout.String() != out || count != n {
		t.Fatalf("%s: %v, exit %d, output %q, %d calls seen of %d", name, err, res.ExitCode, stdout.String(), count, n)
	}
	t.Logf("%s: %d stops", name, st.stops)
	if st.stops < minStops || st.stops > maxStops {
		t.Errorf("%s: %d stops, want %d to %d", name, st.stops, minStops, maxStops)
	}
}

// TestSyscallJIT: in run mode, a program that writes code gets the
// seccomp filter then (seccomp.go's lateFilter): the probed call the
// code makes is seen, and the calls made elsewhere stay in-process, in
// the parent and in a fork child not followed (traced silently, since
// the filter went with it), which exits 0. With --no-seccomp the
// process stops at every call from then on.
func TestSyscallJIT(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "pt_sys.c")
	const n = 2000
	for _, c := range []struct {
		name               string
		noFilter           bool
		minStops, maxStops int64
		said               string
	}{
		{"filter", false, 0, 500, "a seccomp filter stops the probed calls made from there"},
		{"no filter", true, 20 * n, 1 << 40, "every system call stops from now on"},
	} {
		var said []string
		e := &Engine{NoSeccomp: c.noFilter, Verbose: func(s string) { said = append(said, s) }}
		getppids(t, c.name, e, "4001 child 0\n", 2*n+1, c.minStops, c.maxStops, bin, "jit", "2000")
		if !strings.Contains(strings.Join(said, "\n"), c.said) {
			t.Errorf("%s: -v did not say %q", c.name, c.said)
		}
	}
}

// TestSyscallShepherd: a trace with a filter in (here from the exec:
// --no-pads), stopped early, keeps passing the probed calls through
// until the command ends, which then exits as it would have, its calls
// answered.
func TestSyscallShepherd(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "pt_sys.c")
	ctx, cancel := context.WithCancel(context.Background())
	var out bytes.Buffer
	seen := 0
	// Stopped at its first event, not after a time: a busy machine may
	// take longer to start it.
	res, err := (&Engine{NoPads: true}).Trace(ctx, probe.Target{Argv: []string{bin, "mix", "50000"}, Stdout: &out},
		sysSites(t, "syscall:getppid", 0), func(*probe.Event) {
			if seen++; seen == 1 {
				cancel()
			}
		})
	if err != nil || res.ExitCode != 0 || out.String() != "50000\n" {
		t.Fatalf("%v, exit %d, output %q: the command must run to its end with every getppid answered", err, res.ExitCode, out.String())
	}
	if seen == 0 || seen >= 2*50000 || len(res.Notices) == 0 {
		t.Errorf("%d events (want some, then none once stopped), notices %q", seen, res.Notices)
	}
}

// TestSyscallAttach: attach mode traces with no filter (pads and traps,
// padsystrap.go), and the process runs on after the detach.
func TestSyscallAttach(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "pt_sys.c")
	cmd := exec.Command(bin, "loop")
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	if l, _ := bufio.NewReader(stdout).ReadString('\n'); l != "ready\n" {
		t.Fatalf("fixture said %q", l)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var writes int
	_, err := (&Engine{}).Trace(ctx, probe.Target{PIDs: []int{cmd.Process.Pid}}, sysSites(t, "syscall:write", 0),
		func(ev *probe.Event) {
			if ev.Kind == "return" && ev.Sys.Ret == 5 && string(captured(ev, 1, false)) == "tick\n" {
				writes++
			}
		})
	if err != nil || writes < 10 {
		t.Fatalf("%v; %d writes seen", err, writes)
	}
	// Still running, neither stopped nor traced.
	time.Sleep(20 * time.Millisecond)
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
	if err != nil {
		t.Fatalf("the process is gone after the detach: %v", err)
	}
	st := string(b)
	if !strings.Contains(st, "TracerPid:\t0\n") || strings.Contains(st, "State:\tt") || strings.Contains(st, "State:\tT") {
		t.Fatalf("after the detach:\n%s", st)
	}
}
