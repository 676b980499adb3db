//go:build linux && amd64

package enginetest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
	"golang.org/x/sys/unix"
)

// utapBin is the CLI, built once in TestMain, run as a user would.
var (
	utapBin  string
	buildErr error
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "utap-enginetest")
	if err != nil {
		panic(err)
	}
	utapBin = filepath.Join(dir, "utap")
	cmd := exec.Command("go", "build", "-o", utapBin, "github.com/utap/utap/cmd/utap")
	if out, err := cmd.CombinedOutput(); err != nil {
		// Only the CLI tests need it; they fail with this.
		buildErr = fmt.Errorf("building cmd/utap: %v\n%s", err, out)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// backends are the CLI's --backend values, each with what it needs.
var backends = []struct {
	name string
	need func(testing.TB)
}{
	{"ptrace", need.Root},
	{"uprobe", need.Uprobes},
}

// needBackend skips (or under CI fails) t when the backend called name
// cannot run here; a name not in backends (auto) needs nothing more.
func needBackend(t *testing.T, name string) {
	t.Helper()
	for _, b := range backends {
		if b.name == name {
			b.need(t)
		}
	}
}

type cliResult struct {
	stdout, stderr string
	code           int
}

// utapOut runs utap with args, writing its trace to a file (-o, added
// first), wants it to exit 0, and returns the trace and utap's stderr.
func utapOut(t *testing.T, args ...string) (trace, stderr string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "events")
	r := utap(t, append([]string{args[0], "-o", out}, args[1:]...)...)
	if r.code != 0 {
		t.Fatalf("utap %q: exit %d: %s", args, r.code, r.stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(data), r.stderr
}

func utap(t *testing.T, args ...string) cliResult {
	t.Helper()
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	cmd := exec.Command(utapBin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Fatalf("utap %q still running after a minute", args)
	}
	r := cliResult{stdout.String(), stderr.String(), 0}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.code = exitCode(ee.ProcessState)
	} else if err != nil {
		t.Fatal(err)
	}
	return r
}

var pidRE = regexp.MustCompile(`\[pid \d+\]`)

// TestCLISameAcrossBackends: the same command line on every backend
// prints the same event lines (pids aside) and passes the command's output
// and exit status through.
func TestCLISameAcrossBackends(t *testing.T) {
	bin := etWork(t)
	for _, c := range []struct {
		args  []string
		specs []string
		lines int
	}{
		// Each with the process's end, as ltrace shows it.
		{[]string{"args"}, []string{"work(arg1, arg2)", "greet(str(arg1), arg2)", "libc:setvbuf(arg3, arg4)"}, 8},
		{[]string{"exit", "3"}, []string{"work(arg1, arg2:x)"}, 2},
		{[]string{"kill"}, []string{"work(arg1, arg2:x)"}, 2},
	} {
		argv := append([]string{bin}, c.args...)
		stdout, code := untraced(t, argv)
		var first string
		for _, b := range backends {
			t.Run(c.args[0]+"/"+b.name, func(t *testing.T) {
				b.need(t)
				out := filepath.Join(t.TempDir(), "events")
				args := []string{"run", "--backend", b.name, "-o", out}
				for _, s := range c.specs {
					args = append(args, "-e", s)
				}
				r := utap(t, append(append(args, "--"), argv...)...)
				if r.stdout != stdout || r.code != code || r.stderr != "" {
					t.Errorf("exit %d, stdout %q, stderr %q; want exit %d, stdout %q, no stderr", r.code, r.stdout, r.stderr, code, stdout)
				}
				events, err := os.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				got := pidRE.ReplaceAllString(string(events), "[pid N]")
				if n := strings.Count(got, "\n"); n != c.lines {
					t.Errorf("%d event lines, want %d:\n%s", n, c.lines, got)
				}
				if first == "" {
					first = got
				} else if got != first {
					t.Errorf("events differ from %s's:\n%s\nvs\n%s", backends[0].name, got, first)
				}
			})
		}
	}
}

// jsonKeys are the keys of docs/output.md's JSON lines, exactly.
var jsonKeys = []string{"args", "duration_ns", "func", "kind", "pid", "probe", "ret", "tid", "time_ns"}

func TestCLIJSON(t *testing.T) {
	bin := etWork(t)
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			b.need(t)
			out := filepath.Join(t.TempDir(), "events")
			// --entry-only: one object per entry event (no return twins).
			r := utap(t, "run", "--backend", b.name, "--entry-only", "--format", "json", "-o", out,
				"-e", "work(arg1, arg2:x)", "-e", "greet(str(arg1))", "--", bin, "args")
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			ls := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
			if len(ls) != 6 {
				t.Fatalf("%d lines, want 6:\n%s", len(ls), data)
			}
			for i, l := range ls {
				var m map[string]json.RawMessage
				if err := json.Unmarshal([]byte(l), &m); err != nil {
					t.Fatalf("line %d %q: %v", i+1, l, err)
				}
				if keys := slices.Sorted(mapKeys(m)); !slices.Equal(keys, jsonKeys) {
					t.Errorf("line %d keys %q, want %q", i+1, keys, jsonKeys)
				}
				var ev struct {
					TimeNs, DurationNs int64 `json:"-"`
					PID, TID           int
					Kind, Func         string
					Args               []any
					Ret                any
				}
				if err := json.Unmarshal([]byte(l), &ev); err != nil {
					t.Fatalf("line %d %q: %v", i+1, l, err)
				}
				if ev.PID <= 0 || ev.TID != ev.PID || ev.Kind != "entry" || ev.Ret != nil || len(ev.Args) == 0 {
					t.Errorf("line %d: %q", i+1, l)
				}
			}
			if !strings.Contains(ls[3], `"args":[4,"0x3"]`) || !strings.Contains(ls[5], `"args":["world"]`) {
				t.Errorf("args not as documented: %s", data)
			}
		})
	}
}

func mapKeys(m map[string]json.RawMessage) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// TestCLIBadInput: one error line naming the thing, exit 2, and the
// command never run (it would create the marker file).
func TestCLIBadInput(t *testing.T) {
	bin := etWork(t)
	notELF := filepath.Join(t.TempDir(), "notelf")
	if err := os.WriteFile(notELF, []byte("this is not a program\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	deadPID := fmt.Sprint(gone.ProcessState.Pid())
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			b.need(t)
			for _, c := range []struct {
				name string
				args []string // MARK is replaced by the marker path
				want []string
			}{
				{"unknown symbol", []string{"run", "-e", "no_such_fn(arg1)", "--", bin, "touch", "MARK"}, []string{"no_such_fn"}},
				{"syntax error", []string{"run", "-e", "work((", "--", bin, "touch", "MARK"}, []string{"work(("}},
				{"not an ELF", []string{"run", "-e", "work", "--", notELF}, []string{notELF}},
				{"missing pid", []string{"attach", "-p", deadPID, "-e", "work"}, []string{deadPID}},
			} {
				t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
					mark := filepath.Join(t.TempDir(), "ran")
					args := []string{c.args[0], "--backend", b.name}
					for _, a := range c.args[1:] {
						args = append(args, strings.ReplaceAll(a, "MARK", mark))
					}
					oneErrorLine(t, utap(t, args...), c.want...)
					if _, err := os.Stat(mark); err == nil {
						t.Errorf("the command ran despite the error")
					}
				})
			}
			t.Run("attach_unknown_symbol", func(t *testing.T) {
				tr := startTracee(t, "ready", bin, "loop")
				before := snapshot(t, tr.pid)
				oneErrorLine(t, utap(t, "attach", "--backend", b.name, "-p", fmt.Sprint(tr.pid), "-e", "no_such_fn"), "no_such_fn")
				if tr.runsOn(t) {
					t.Error("a failed attach left the process stopped")
				}
				sameImage(t, before, snapshot(t, tr.pid), nil)
			})
		})
	}
}

// oneErrorLine checks the bad-input contract: exit 2, one stderr line
// starting "utap: " that contains every want.
func oneErrorLine(t *testing.T, r cliResult, want ...string) {
	t.Helper()
	line := strings.TrimSuffix(r.stderr, "\n")
	if r.code != 2 || strings.Contains(line, "\n") || !strings.HasPrefix(line, "utap: ") {
		t.Errorf("exit %d, stderr %q; want exit 2 and one line starting \"utap: \"", r.code, r.stderr)
	}
	for _, w := range want {
		if !strings.Contains(line, w) {
			t.Errorf("error %q does not name %q", line, w)
		}
	}
}

// TestCLICtrlC: SIGINT to `utap attach` removes every probe; utap exits 0
// and the process runs on as before.
func TestCLICtrlC(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			b.need(t)
			attachThenSignal(t, b.name, syscall.SIGINT, 0)
		})
	}
}

// TestCLIEndSignals: every catchable signal that would end utap ends the
// trace instead — probes removed, process detached and running on as
// before — and utap exits 128+signal (0 for SIGTERM, a usual way to end).
func TestCLIEndSignals(t *testing.T) {
	sigs := []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGPIPE, syscall.SIGALRM,
		syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGXCPU, syscall.SIGXFSZ, syscall.SIGVTALRM}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			b.need(t)
			for _, sig := range sigs {
				t.Run(unix.SignalName(sig), func(t *testing.T) {
					want := 128 + int(sig)
					if sig == syscall.SIGTERM {
						want = 0
					}
					attachThenSignal(t, b.name, sig, want)
				})
			}
		})
	}
}

// attachThenSignal attaches utap to a busy process, sends sig once events
// flow, and checks that utap exits with code, leaving no probe and the
// process running as before.
func attachThenSignal(t *testing.T, backend string, sig syscall.Signal, code int) {
	t.Helper()
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	bin := etWork(t)
	tr, before, ours := loopTracee(t, bin)
	out := filepath.Join(t.TempDir(), "events")
	cmd := exec.Command(utapBin, "attach", "--backend", backend, "-p", fmt.Sprint(tr.pid), "-o", out, "-e", "work(arg1)")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer cmd.Process.Kill()
	waitEvents(t, out, &stderr)
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		got := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			got = exitCode(ee.ProcessState)
		} else if err != nil {
			t.Fatal(err)
		}
		if got != code {
			t.Errorf("utap after %v: exit %d, want %d; stderr %q", sig, got, code, stderr.String())
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("utap still running 5s after %v", sig)
	}
	checkLeftAlone(t, tr, bin, before, ours)
}

// loopTracee starts bin's loop mode, probed at work by the caller, with
// what checkLeftAlone compares afterwards: its image and work's address.
func loopTracee(t *testing.T, bin string) (*tracee, image, []uint64) {
	t.Helper()
	tr := startTracee(t, "ready", bin, "loop")
	before := snapshot(t, tr.pid)
	_, sites := resolvePID(t, tr.pid, "work(arg1)")
	return tr, before, siteAddrs(t, tr.pid, sites)
}

// checkLeftAlone checks that the traced process runs on, unstopped, with
// its memory as before the trace and no uprobe of ours left.
func checkLeftAlone(t *testing.T, tr *tracee, bin string, before image, ours []uint64) {
	t.Helper()
	stopped := tr.runsOn(t)
	sameImage(t, before, snapshot(t, tr.pid), ours)
	// Other tests may own uprobes; none may be on this program.
	if evs := uprobeEvents(t); strings.Contains(evs, bin) {
		t.Errorf("uprobes left in uprobe_events:\n%s", evs)
	}
	if stopped {
		t.Fatal("the process was left stopped")
	}
}

// TestCLIClosedOutput: the reader of utap's events goes away (`| head -1`):
// the trace ends with one line saying why, every probe removed, and the
// process runs on.
func TestCLIClosedOutput(t *testing.T) {
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	bin := etWork(t)
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			b.need(t)
			tr, before, ours := loopTracee(t, bin)
			cmd := exec.Command(utapBin, "attach", "--backend", b.name, "-p", fmt.Sprint(tr.pid), "-o", "-", "-e", "work(arg1)")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			if _, err := bufio.NewReader(stdout).ReadString('\n'); err != nil {
				t.Fatalf("no event: %v; stderr %q", err, stderr.String())
			}
			stdout.Close()
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				var ee *exec.ExitError
				if !errors.As(err, &ee) || exitCode(ee.ProcessState) != 2 {
					t.Errorf("utap: %v, want exit 2; stderr %q", err, stderr.String())
				}
			case <-time.After(5 * time.Second):
				t.Fatal("utap still running 5s after its output closed")
			}
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			if len(lines) != 1 || !strings.Contains(lines[0], "utap: writing events:") || !strings.Contains(lines[0], "broken pipe") {
				t.Errorf("stderr %q, want one line about the broken pipe", stderr.String())
			}
			checkLeftAlone(t, tr, bin, before, ours)
		})
	}
}

// uprobeEvents is tracefs's uprobe_events, mounting tracefs if needed.
func uprobeEvents(t *testing.T) string {
	t.Helper()
	const dir = "/sys/kernel/tracing"
	path := filepath.Join(dir, "uprobe_events")
	if _, err := os.Stat(path); err != nil {
		if err := syscall.Mount("tracefs", dir, "tracefs", 0, ""); err != nil {
			t.Fatalf("mounting tracefs on %s: %v", dir, err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCLICountSameAcrossBackends: -c and --count-only report the same calls,
// errors and timed calls on every backend, whether the engine counts in
// place (uprobe: BPF maps) or from events (ptrace).
func TestCLICountSameAcrossBackends(t *testing.T) {
	bin := etWork(t)
	const n = 2000
	neg := []string{bin, "neg", strconv.Itoa(n)}
	type row struct {
		Function             string
		Calls, Errors, Timed uint64
	}
	for _, c := range []struct {
		flag  string
		specs []string
		argv  []string
		want  []row
	}{
		{"-c", []string{"work", "greet"}, neg, []row{{"work", n, n / 2, n}}},
		{"--count-only", []string{"work"}, neg, []row{{"work", n, 0, 0}}},
		{"-c", []string{"work if (long)arg1 > 0"}, neg, []row{{"work", n/2 - 1, 0, 0}}},
		{"-c", []string{"return:work if ret < 0"}, neg, []row{{"work", n / 2, n / 2, n / 2}}},
		// Both CPUs count at once: the kernel's counters are atomic.
		{"-c", []string{"work"}, []string{bin, "threads", "3000", "4"}, []row{{"work", 12000, 0, 12000}}},
	} {
		argv := c.argv
		stdout, _ := untraced(t, argv)
		for _, b := range backends {
			t.Run(c.flag+" "+strings.Join(c.specs, ",")+" "+argv[1]+"/"+b.name, func(t *testing.T) {
				b.need(t)
				args := []string{"run", "--backend", b.name, "-q", c.flag, "--format", "json"}
				for _, s := range c.specs {
					args = append(args, "-e", s)
				}
				r := utap(t, append(append(args, "--"), argv...)...)
				if r.stdout != stdout || r.code != 0 {
					t.Fatalf("exit %d, stdout %q; want %q", r.code, r.stdout, stdout)
				}
				var rep struct {
					Functions []struct {
						Function      string
						Calls, Errors uint64
						Timed         uint64 `json:"timed_calls"`
						MinNs         uint64 `json:"min_ns"`
						MaxNs         uint64 `json:"max_ns"`
						P50Ns         uint64 `json:"p50_ns"`
					}
				}
				if err := json.Unmarshal([]byte(r.stderr), &rep); err != nil {
					t.Fatalf("%v: %q", err, r.stderr)
				}
				var got []row
				for _, f := range rep.Functions {
					got = append(got, row{f.Function, f.Calls, f.Errors, f.Timed})
					if f.Timed > 0 && (f.MinNs == 0 || f.MinNs > f.P50Ns || f.P50Ns > f.MaxNs) {
						t.Errorf("%s: min %d p50 %d max %d out of order", f.Function, f.MinNs, f.P50Ns, f.MaxNs)
					}
				}
				if !slices.Equal(got, c.want) {
					t.Errorf("got %+v, want %+v", got, c.want)
				}
			})
		}
	}
}

// TestCLISummaryWithEvents: -C prints every event, then the summary
// (strace -C), on every backend.
func TestCLISummaryWithEvents(t *testing.T) {
	bin := etWork(t)
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			b.need(t)
			r := utap(t, "run", "--backend", b.name, "-q", "-C", "--format", "json", "-e", "work", "--", bin, "neg", "10")
			lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			if r.code != 0 || len(lines) != 21 {
				t.Fatalf("exit %d, %d lines, want 20 events and a summary:\n%s", r.code, len(lines), r.stderr)
			}
			var rep struct {
				Functions []struct{ Calls, Errors uint64 }
			}
			if err := json.Unmarshal([]byte(lines[20]), &rep); err != nil || len(rep.Functions) != 1 ||
				rep.Functions[0].Calls != 10 || rep.Functions[0].Errors != 5 {
				t.Errorf("summary %q: %+v, %v", lines[20], rep, err)
			}
		})
	}
}

// TestCLIRunHangUp: a hang-up of `utap run` ends the trace, not the
// command: utap exits 129 and the command runs on, untraced, not a zombie
// nor stopped.
func TestCLIRunHangUp(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			b.need(t)
			r := runLoop(t, b.name)
			if err := r.cmd.Process.Signal(syscall.SIGHUP); err != nil {
				t.Fatal(err)
			}
			var ee *exec.ExitError
			if err := r.cmd.Wait(); !errors.As(err, &ee) || exitCode(ee.ProcessState) != 129 {
				t.Errorf("utap after SIGHUP: %v, want exit 129", err)
			}
			r.runsOn(t)
		})
	}
}

// TestCLIAutoFallsBack: a probe the kernel refuses only as it goes in (an
// EVEX instruction) makes --backend auto trace with ptrace instead, saying
// why without advising what it just did; --backend uprobe fails naming it.
func TestCLIAutoFallsBack(t *testing.T) {
	need.Uprobes(t)
	bin := fixture.C(t, "up_insns.c", "-O1", "-g")
	r := utap(t, "run", "--entry-only", "-e", "evex_fn", "-e", "shlx_fn", "--", bin)
	if !strings.Contains(r.stderr, "utap: backend ptrace: ") {
		t.Skipf("this kernel probes EVEX vmovdqu64: %q", r.stderr)
	}
	if r.code != 0 || strings.Contains(r.stderr, "use --backend ptrace") || !strings.Contains(r.stderr, "shlx_fn(") || !strings.Contains(r.stdout, "shlx ") {
		t.Errorf("auto: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = utap(t, "run", "--backend", "uprobe", "--entry-only", "-e", "evex_fn", "--", bin)
	if r.code != 2 || !strings.Contains(r.stderr, "evex_fn") || r.stdout != "" {
		t.Errorf("uprobe: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// TestCLIAutoFallsBackCxx: a C++ program that throws links an unwinder,
// so the kernel engine probes returns at RETs, and a PLT stub has none:
// the default trace of printf is refused there, and auto takes the ptrace
// engine, which hijacks (before, the run failed); --backend uprobe says
// so in one line.
func TestCLIAutoFallsBackCxx(t *testing.T) {
	need.Uprobes(t)
	bin := fixture.C(t, "pt_throw.cc", "-O1", "-g")
	want, _ := untraced(t, []string{bin, "3"})
	r := utap(t, "run", "-E", "printf", "--", bin, "3")
	if r.code != 0 || r.stdout != want || !strings.Contains(r.stderr, "utap: backend ptrace: ") || !strings.Contains(r.stderr, "printf(") {
		t.Errorf("auto: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = utap(t, "run", "--backend", "uprobe", "-E", "printf", "--", bin, "3")
	if r.code != 2 || r.stdout != "" {
		t.Errorf("uprobe: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	oneErrorLine(t, r, "printf@plt", "--backend ptrace")
}

// TestCLIUntimedSaid: -c with a conditional entry probe cannot time its
// calls; it says so instead of showing empty times silently.
func TestCLIUntimedSaid(t *testing.T) {
	need.Root(t)
	r := utap(t, "run", "-c", "--backend", "ptrace", "-e", "work(arg1) if arg1 > 2", "--", etWork(t), "args")
	if r.code != 0 || !strings.Contains(r.stderr, `utap: "work(arg1) if arg1 > 2" is not timed`) {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestCLIClosedStderrAtStart: utap's stderr closes while the pads go in
// (`utap run -v -o FILE ... 2>&1 | head -1`, -v saying a line per
// site): -v's lines are lost, not the trace, which goes on into FILE
// whole, and the command runs to its end. On 69127c7 the watcher's
// wake-up SIGSTOP, met by a system call injected to place the pads, was
// delivered: the command stayed in a group-stop and utap spun for good;
// until 2026-11-27 the closed stderr's SIGPIPE ended the trace.
func TestCLIClosedStderrAtStart(t *testing.T) {
	need.Root(t)
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "dd")
	sh := fmt.Sprintf("%s run -v --backend ptrace -S -o %s -- dd if=/dev/zero of=%s bs=1 count=2000 status=none 2>&1 | head -1 >/dev/null",
		utapBin, filepath.Join(dir, "trace"), file)
	cmd := exec.Command("sh", "-c", sh)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		exec.Command("pkill", "-KILL", "-f", file).Run()
		t.Fatal("utap and the command still running 60s after utap's stderr closed")
	}
	// dd finishes on its own, maybe after utap has exited.
	deadline := time.Now().Add(60 * time.Second)
	for {
		st, err := os.Stat(file)
		if err == nil && st.Size() == 2000 {
			break
		}
		if time.Now().After(deadline) {
			exec.Command("pkill", "-KILL", "-f", file).Run()
			t.Fatalf("the command did not run to its end: %v %v", st, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	text, err := os.ReadFile(filepath.Join(dir, "trace"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(text), "\nwrite(1, \"\\0\", 1) "); n != 2000 {
		t.Errorf("%d of dd's 2,000 writes traced, its trace:\n%.2000s", n, text)
	}
}
