//go:build linux && amd64

package enginetest

import (
	"debug/elf"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"golang.org/x/arch/x86/x86asm"

	"github.com/utap/utap/elfsym"
	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/probe"
	"github.com/utap/utap/uprobe"
)

// behaviour is one row of the table every engine runs.
type behaviour struct {
	name    string
	fixture func(t *testing.T) string // builds the program, returns its path
	args    []string
	argsOf  func(t *testing.T) []string // replaces args when set
	specs   []string
	// prep computes specs that depend on the built binary (offsets,
	// addresses); it replaces specs when set.
	prep   func(t *testing.T, bin string) []string
	follow bool
	// wantErr: the pipeline must fail with this error (errors.Is), and
	// check is not called.
	wantErr error
	check   func(t *testing.T, o *outcome)
	// skip names engines this row does not apply to (or fails on), with why.
	skip map[string]string
}

func etWork(t *testing.T) string { return fixture.C(t, "et_work.c") }
func etPlug(t *testing.T) string { return fixture.C(t, "et_plug.c", "-shared", "-fPIC", "-O1") }
func etCtorLib(t *testing.T) string {
	return fixture.C(t, "et_ctorlib.c", "-shared", "-fPIC", "-O1")
}
func etCtorMain(t *testing.T) string {
	return fixture.C(t, "et_ctormain.c", "-O1", "-Wl,--no-as-needed", etCtorLib(t))
}
func etThrowPlug(t *testing.T) string {
	return fixture.C(t, "et_throwplug.cc", "-shared", "-fPIC", "-O1", "-g")
}
func ptGo(t *testing.T) string { return fixture.Go(t, "pt_go") }

var argsLines = []string{"work(1, 2)", "work(3, 4)", "work(5, 6)", "work(4, 3)"}

func behaviours() []behaviour {
	return []behaviour{
		{name: "entry args", fixture: etWork, args: []string{"args"},
			specs: []string{"work(arg1, arg2)"}, check: wantLines(argsLines...)},
		{name: "dwarf params", fixture: etWork, args: []string{"args"},
			specs: []string{"work(a, b)"}, check: wantLines(argsLines...)},
		{name: "condition", fixture: etWork, args: []string{"args"},
			specs: []string{"work(a, b) if a*2 + b > 10"}, check: wantLines("work(5, 6)", "work(4, 3)")},
		{name: "str fetch", fixture: etWork, args: []string{"args"},
			specs: []string{"greet(str(s), n)"}, check: wantLines(`greet("hello", 7)`, `greet("world", 8)`)},
		{name: "str compare", fixture: etWork, args: []string{"args"},
			specs: []string{`greet(n) if str(s) == "world"`}, check: wantLines("greet(8)")},
		{name: "str in an untouched page", fixture: etWork, args: []string{"cold"},
			specs: []string{"greet(str(s), n)"}, check: wantLines(`greet("cold", 9)`)},
		{name: "deref", fixture: etWork, args: []string{"args"},
			specs: []string{"peek(*p, n)"}, check: wantLines("peek(?, 1)", "peek(42, 2)")},
		{name: "faulting deref condition", fixture: etWork, args: []string{"args"},
			specs: []string{"peek(n) if *p == 42"}, check: wantLines("peek(2)")},
		{name: "several probes in order", fixture: etWork, args: []string{"args"},
			specs: []string{"work(a)", "greet(n)", "work2(a)"},
			check: wantLines("work(1)", "work(3)", "work(5)", "work(4)", "greet(7)", "greet(8)", "work2(5)")},
		{name: "glob", fixture: etWork, args: []string{"args"},
			specs: []string{"work*(arg1)"},
			check: wantLines("work(1)", "work(3)", "work(5)", "work(4)", "work2(5)")},
		{name: "offset at a boundary", fixture: etWork, args: []string{"args"},
			prep: func(t *testing.T, bin string) []string {
				return []string{fmt.Sprintf("work+%d(arg1, arg2)", firstInsnLen(t, bin, "work"))}
			},
			check: wantLines(argsLines...)},
		{name: "offset inside an instruction", fixture: etWork, args: []string{"args"},
			specs: []string{"work+1"}, wantErr: elfsym.ErrNotBoundary},
		{name: "bare address", fixture: etWork, args: []string{"args"},
			prep: func(t *testing.T, bin string) []string {
				return []string{fmt.Sprintf("%#x(arg1)", symAddr(t, bin, "work"))}
			},
			// The address is work's: events name the function it is in.
			check: wantLines("work(1)", "work(3)", "work(5)", "work(4)")},
		{name: "unknown symbol", fixture: etWork, args: []string{"args"},
			specs: []string{"no_such_function"}, wantErr: elfsym.ErrNoSymbol},
		{name: "libc open str condition", fixture: etWork, args: []string{"libc"},
			specs: []string{`libc:open(str(arg1)) if str(arg1) == "/etc/hostname"`},
			check: wantLines(`open("/etc/hostname")`)},
		{name: "libc malloc condition", fixture: etWork, args: []string{"libc"},
			specs: []string{"libc:malloc(arg1) if arg1 == 12345"}, check: wantLines("malloc(12345)")},
		// A library constructor runs before the program's entry point: the
		// probes are in by then (the loader's rendezvous).
		{name: "library constructor", fixture: etCtorMain,
			prep: func(t *testing.T, _ string) []string {
				return []string{etCtorLib(t) + ":et_ctor_hello(arg1)"}
			},
			check: wantLines("et_ctor_hello(7)", "et_ctor_hello(8)")},
		// C++ functions by their source names: both overloads of a method
		// (DWARF names their parameters), a template instance.
		{name: "c++ names", args: nil,
			fixture: func(t *testing.T) string { return fixture.C(t, "et_cxx.cc", "-O1", "-g") },
			specs:   []string{"app::Server::handle(x)", "app::twice<long>(v)"},
			check:   wantLines("app::Server::handle(1)", "app::Server::handle(2)", "app::twice<long>(4)")},
		// strlen is an IFUNC: probing its resolver would see no call.
		{name: "libc ifunc", fixture: etWork, args: []string{"args"},
			specs: []string{`libc:strlen(str(arg1)) if str(arg1) == "world"`}, check: wantLines(`strlen("world")`)},
		{name: "plt stub", fixture: etWork, args: []string{"libc"},
			specs: []string{"open@plt"}, check: wantCount(1)},
		{name: "threads", fixture: etWork, args: []string{"threads", "200", "8"},
			specs: []string{"work(a)"}, check: wantThreads(8, 200)},
		// The one exact-count row: many hits on many threads, none lost.
		{name: "threads exact count", fixture: etWork, args: []string{"threads", "10000", "8"},
			specs: []string{"work(a)"}, check: wantThreads(8, 10000)},
		{name: "fork without follow", fixture: etWork, args: []string{"fork"},
			specs: []string{"work(a)"}, check: wantLines("work(1)", "work(3)")},
		{name: "fork with follow", fixture: etWork, args: []string{"fork"}, follow: true,
			specs: []string{"work(a)"}, check: wantFork},
		{name: "exec", fixture: etWork, args: []string{"exec"},
			specs: []string{"work(a, b)"}, check: wantExec},
		{name: "own signals", fixture: etWork, args: []string{"signals"},
			specs: []string{"work(a)"}, check: wantLines("work(0)", "work(1)", "work(2)", "work(3)", "work(4)")},
		{name: "exit status", fixture: etWork, args: []string{"exit", "3"},
			specs: []string{"work(a)"}, check: wantLines("work(1)")},
		{name: "killed by signal", fixture: etWork, args: []string{"kill"},
			specs: []string{"work(a)"}, check: wantLines("work(1)")},
		{name: "go goroutines and gc", fixture: ptGo, args: []string{"4", "300"},
			specs: []string{"main.work(a, b)"}, check: wantGo(4, 300)},
		{name: "return value", fixture: etWork, args: []string{"args"},
			specs: []string{"return:work(ret)"},
			check: wantLines("work(3) = 3", "work(7) = 7", "work(11) = 11", "work(7) = 7")},
		// An exception unwinding through frames with live return probes:
		// the program's output and exit status must not change (a kernel
		// uretprobe's trampoline would make the unwinder abort it).
		{name: "c++ exception through return probes", args: []string{"3"},
			fixture: func(t *testing.T) string { return fixture.C(t, "pt_throw.cc", "-O1", "-g") },
			specs:   []string{"return:middle(ret)", "return:leaf(ret)"},
			check:   wantLines("leaf(1) = 1", "leaf(2) = 2", "leaf(3) = 3")},
		// A library loaded by dlopen after the probes went in, unloaded,
		// and loaded again (likely at the same address).
		{name: "dlopen dlclose dlopen", fixture: etWork,
			argsOf: func(t *testing.T) []string { return []string{"dlopen", etPlug(t)} },
			prep: func(t *testing.T, _ string) []string {
				lib := etPlug(t)
				return []string{lib + ":et_plug(arg1)", "return:" + lib + ":et_plug(ret)"}
			},
			check: wantLines("et_plug(0)", "et_plug(0) = 0", "et_plug(1)", "et_plug(2) = 2", "et_plug(2)", "et_plug(4) = 4",
				"et_plug(10)", "et_plug(20) = 20", "et_plug(11)", "et_plug(22) = 22", "et_plug(12)", "et_plug(24) = 24")},
		// The same, thirty times under a SIGALRM every 100 µs: a signal
		// may land in the loader's hook (its trap pad, or int3) and in
		// the probes' pads while they go in and out.
		{name: "dlopen dlclose under a signal storm", fixture: etWork,
			argsOf: func(t *testing.T) []string { return []string{"dlstorm", etPlug(t), "30"} },
			prep:   func(t *testing.T, _ string) []string { return []string{etPlug(t) + ":et_plug(arg1)"} },
			check: wantLines(func() []string {
				var w []string
				for i := range 30 {
					w = append(w, fmt.Sprintf("et_plug(%d)", i))
				}
				return w
			}()...)},
		// The same exception in a C++ library a C program loads by dlopen:
		// the unwinder arrives with it, after the probes went in.
		{name: "c++ exception in a dlopened library", fixture: etWork,
			argsOf: func(t *testing.T) []string { return []string{"dlthrow", etThrowPlug(t)} },
			prep: func(t *testing.T, _ string) []string {
				lib := etThrowPlug(t)
				return []string{"return:" + lib + ":middlep(ret)", "return:" + lib + ":leafp(ret)"}
			},
			check: wantLines("leafp(0) = 0", "middlep(1) = 1", "leafp(1) = 1", "middlep(2) = 2", "leafp(3) = 3", "middlep(4) = 4")},
		{name: "return recursion and durations", fixture: etWork, args: []string{"fib", "10"},
			specs: []string{"fib(n)", "return:fib(ret)"}, check: wantFib(177)},
	}
}

func TestBehaviour(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.Name(), func(t *testing.T) {
			needEngine(t, eng)
			for _, b := range behaviours() {
				t.Run(strings.ReplaceAll(b.name, " ", "_"), func(t *testing.T) {
					if why, ok := b.skip[eng.Name()]; ok {
						t.Skip(why)
					}
					runBehaviour(t, eng, b)
				})
			}
		})
	}
}

func runBehaviour(t *testing.T, eng probe.Engine, b behaviour) {
	bin := b.fixture(t)
	specs := b.specs
	if b.prep != nil {
		specs = b.prep(t, bin)
	}
	args := b.args
	if b.argsOf != nil {
		args = b.argsOf(t)
	}
	argv := append([]string{bin}, args...)
	o, err := traceRun(eng, specs, argv, b.follow)
	if b.wantErr != nil {
		if !errors.Is(err, b.wantErr) {
			t.Fatalf("err = %v, want %v", err, b.wantErr)
		}
		return
	}
	if err != nil {
		if hasReturn(specs) && unsupported(err) {
			t.Skipf("%s engine has no return probes yet: %v", eng.Name(), err)
		}
		if b.name == "plt stub" && errors.Is(err, elfsym.ErrNoSymbol) {
			t.Skipf("elfsym lists no PLT stub here: %v", err)
		}
		t.Fatal(err)
	}
	if hasReturn(specs) {
		skipReturnAsEntry(t, eng, o.events, specs)
	}
	stdout, code := untraced(t, argv)
	if o.stdout != stdout || o.res.ExitCode != code {
		t.Errorf("traced: exit %d, stdout %q; untraced: exit %d, stdout %q", o.res.ExitCode, o.stdout, code, stdout)
	}
	if o.res.Lost != 0 {
		t.Errorf("%d events lost", o.res.Lost)
	}
	for _, ev := range o.events {
		if !slices.Contains(specs, ev.Probe) {
			t.Errorf("event names probe %q, not one of %q", ev.Probe, specs)
			break
		}
	}
	b.check(t, o)
}

func hasReturn(specs []string) bool {
	for _, s := range specs {
		if strings.HasPrefix(s, "return:") {
			return true
		}
	}
	return false
}

// unsupported says an engine refused a probe kind it does not implement.
func unsupported(err error) bool {
	if errors.Is(err, uprobe.ErrUnsupported) {
		return true
	}
	s := strings.ToLower(err.Error())
	return strings.Contains(s, "unsupported") || strings.Contains(s, "not supported")
}

// skipReturnAsEntry skips a return row whose engine fired the return
// probe at entry: an engine that predates return probes and ignores the
// spec's kind (a bug the row reports rather than hides).
func skipReturnAsEntry(t *testing.T, eng probe.Engine, evs []probe.Event, specs []string) {
	t.Helper()
	for _, ev := range evs {
		if strings.HasPrefix(ev.Probe, "return:") && ev.Kind != "return" {
			t.Skipf("BUG(%s): return probe %q fires as a %q event (return probes not implemented) — see report",
				eng.Name(), ev.Probe, ev.Kind)
		}
	}
}

func wantLines(want ...string) func(*testing.T, *outcome) {
	return func(t *testing.T, o *outcome) {
		t.Helper()
		if got := lines(o.events); !slices.Equal(got, want) {
			t.Errorf("events:\n got %q\nwant %q", got, want)
		}
	}
}

func wantCount(n int) func(*testing.T, *outcome) {
	return func(t *testing.T, o *outcome) {
		t.Helper()
		if len(o.events) != n {
			t.Errorf("%d events, want %d: %q", len(o.events), n, lines(o.events))
		}
	}
}

// wantThreads: threads × calls events, each thread's own calls in order
// on its own TID, none on the main thread.
func wantThreads(threads, calls int) func(*testing.T, *outcome) {
	return func(t *testing.T, o *outcome) {
		t.Helper()
		if len(o.events) != threads*calls {
			t.Fatalf("%d events, want %d", len(o.events), threads*calls)
		}
		perTID := map[int][]uint64{}
		for _, ev := range o.events {
			if ev.TID == ev.PID {
				t.Fatalf("event on the main thread: %+v", ev)
			}
			perTID[ev.TID] = append(perTID[ev.TID], ev.Args[0].Int)
		}
		if len(perTID) != threads {
			t.Fatalf("events from %d threads, want %d", len(perTID), threads)
		}
		seen := map[uint64]bool{}
		for tid, args := range perTID {
			if len(args) != calls {
				t.Errorf("thread %d: %d events, want %d", tid, len(args), calls)
			}
			for _, a := range args {
				if a != args[0] {
					t.Errorf("thread %d has calls of threads %d and %d", tid, args[0], a)
					break
				}
			}
			seen[args[0]] = true
		}
		if len(seen) != threads {
			t.Errorf("thread arguments %v, want %d distinct", seen, threads)
		}
	}
}

func wantFork(t *testing.T, o *outcome) {
	sorted := sortedByPhase(o.events)
	wantLines("work(1)", "work(2)", "work(3)")(t, sorted)
	if len(o.events) != 3 {
		return
	}
	// work(1), before the fork, names the parent: the child's ring may
	// be read before the parent's, so it need not come first.
	parent := sorted.events[0].PID
	for _, ev := range sorted.events {
		if child := ev.Args[0].Int == 2; child == (ev.PID == parent) {
			t.Errorf("%s on pid %d, parent is %d", line(ev), ev.PID, parent)
		}
	}
}

// sortedByPhase orders the fork row's events by argument: the child's
// work(2) and the parent's wait race in the stream only in principle,
// but the parent's work(3) happens after waitpid.
func sortedByPhase(evs []probe.Event) *outcome {
	s := append([]probe.Event(nil), evs...)
	slices.SortStableFunc(s, func(a, b probe.Event) int { return int(a.Args[0].Int) - int(b.Args[0].Int) })
	return &outcome{events: s}
}

func wantExec(t *testing.T, o *outcome) {
	wantLines("work(1, 1)", "work(0, 100)", "work(1, 100)", "work(2, 100)")(t, o)
	for _, ev := range o.events {
		if ev.PID != o.events[0].PID {
			t.Errorf("%s on pid %d, want %d: exec keeps the pid", line(ev), ev.PID, o.events[0].PID)
		}
	}
}

// wantGo: goroutines × calls events of main.work(j, i), calls per i.
func wantGo(goroutines, calls int) func(*testing.T, *outcome) {
	return func(t *testing.T, o *outcome) {
		t.Helper()
		if len(o.events) != goroutines*calls {
			t.Fatalf("%d events, want %d", len(o.events), goroutines*calls)
		}
		perG := map[uint64]int{}
		for _, ev := range o.events {
			if ev.Func != "main.work" || len(ev.Args) != 2 {
				t.Fatalf("unexpected event %s", line(ev))
			}
			perG[ev.Args[1].Int]++
		}
		for i := range goroutines {
			if perG[uint64(i)] != calls {
				t.Errorf("goroutine %d: %d calls, want %d", i, perG[uint64(i)], calls)
			}
		}
	}
}

// wantFib: calls entries and calls returns, properly nested, every
// return with a duration.
func wantFib(calls int) func(*testing.T, *outcome) {
	return func(t *testing.T, o *outcome) {
		t.Helper()
		depth, entries, returns, noDuration := 0, 0, 0, 0
		for _, ev := range o.events {
			switch ev.Kind {
			case "entry":
				entries++
				depth++
			case "return":
				returns++
				depth--
				if ev.DurationNs <= 0 {
					noDuration++
				}
			}
			if depth < 0 {
				t.Fatalf("a return before its entry at event %d", entries+returns)
			}
		}
		if noDuration > 0 && noDuration == returns && entries == calls && returns == calls {
			t.Skip(bugNoDuration(o.engine))
		}
		if noDuration > 0 {
			t.Errorf("%d of %d returns without a duration", noDuration, returns)
		}
		if entries != calls || returns != calls {
			t.Errorf("%d entries, %d returns, want %d each", entries, returns, calls)
		}
		if last := o.events[len(o.events)-1]; line(last) != "fib(55) = 55" {
			t.Errorf("last event %s, want fib(55) = 55", line(last))
		}
	}
}

// symAddr is the link-time address of a function of bin.
func symAddr(t *testing.T, bin, name string) uint64 {
	t.Helper()
	s, _ := fixture.Func(t, bin, name)
	return s.Value
}

// firstInsnLen is the length of a function's first instruction, so
// name+len is the next instruction boundary.
func firstInsnLen(t *testing.T, bin, name string) int {
	t.Helper()
	addr := symAddr(t, bin, name)
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Vaddr <= addr && addr < p.Vaddr+p.Filesz {
			code := make([]byte, 15)
			if _, err := p.ReadAt(code, int64(addr-p.Vaddr)); err != nil {
				t.Fatal(err)
			}
			inst, err := x86asm.Decode(code, 64)
			if err != nil {
				t.Fatal(err)
			}
			return inst.Len
		}
	}
	t.Fatalf("%s: %#x is in no segment", bin, addr)
	return 0
}
