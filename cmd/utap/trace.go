//go:build linux && amd64

package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"
	"github.com/utap/utap/elfsym"
	"github.com/utap/utap/internal/output"
	"github.com/utap/utap/internal/proc"
	"github.com/utap/utap/internal/profile"
	"github.com/utap/utap/internal/summary"
	"github.com/utap/utap/probe"
)

// traceFlags are shared by run and attach.
func traceFlags() []cli.Flag {
	return withLongNames(append([]cli.Flag{
		&cli.StringSliceFlag{Name: "e", Usage: "probe `SPEC` (repeatable), e.g. -e 'libc:malloc(arg1)' -e 'return:work'"},
		&cli.StringFlag{Name: "probes", Usage: "read specs from `FILE`, one a line, # comments"},
		&cli.StringFlag{Name: "backend", Value: "auto", Usage: "engine: auto, ptrace or uprobe"},
		&cli.StringFlag{Name: "o", Usage: "write events to `FILE` instead of stderr"},
		&cli.StringFlag{Name: "format", Value: "text", Usage: "text (ltrace-like lines), json (JSON lines), perfetto (a timeline for ui.perfetto.dev, with -o FILE), or calls by user stack (implies -k): pprof (go tool pprof, with -o FILE), folded (flamegraph.pl's input) or flamegraph (an SVG, with -o FILE)"},
		&cli.BoolFlag{Name: "tt", Usage: "prefix lines with the wall-clock time, microseconds"},
		&cli.IntFlag{Name: "s", Value: output.DefaultStrLen, Usage: "show at most `N` bytes of each string"},
		&cli.BoolFlag{Name: "T", Usage: "show the time spent in each call on return lines"},
		&cli.BoolFlag{Name: "c", Usage: "count calls and time per function; print a summary on exit instead of events"},
		&cli.BoolFlag{Name: "C", Usage: "like -c, and print the events too (strace -C)"},
		&cli.BoolFlag{Name: "count-only", Usage: "count calls per function, untimed: no return probes, so one hit per call (on the uprobe engine counted in the kernel, as bpftrace's count()); summary on exit"},
		&cli.BoolFlag{Name: "entry-only", Usage: "no return probe beside each entry probe: one hit per call instead of two, and no return values"},
		&cli.IntFlag{Name: "n", Usage: "indent each call by `N` spaces per level of nesting (ltrace -n)"},
		&cli.BoolFlag{Name: "f", Usage: "follow forked children"},
		&cli.BoolFlag{Name: "q", Usage: "quiet: no informational lines on stderr"},
		&cli.BoolFlag{Name: "lossy", Usage: "ptrace engine: a pad whose ring is full drops the event (counted, said at the end) instead of making the calling thread wait for utap: the program's pace stays its own, as under bpftrace"},
		&cli.BoolFlag{Name: "no-pads", Usage: "ptrace engine: keep every probe a breakpoint (by default an entry probe runs in the process, in a pad its site jumps to: no stop; memory and strings are read there by process_vm_readv)"},
		&cli.BoolFlag{Name: "v", Aliases: []string{"verbose"}, Usage: "say how each probe site is placed (ptrace: an in-process pad, or a breakpoint and why)"},
		&cli.BoolFlag{Name: "slow-wakeups", Usage: "ptrace engine: leave idle CPUs halting (by default, while stops come fast, it asks them to poll through /dev/cpu_dma_latency: a stop costs about half, idle CPU time is burned)"},
		stackFlag, stackDepthFlag, stackModeFlag, weightFlag, // -k (stack.go), --weight (profile.go)
		intervalFlag, // aggregations (agg.go)
	}, append(append(ltraceFlags(), straceFlags()...), append(straceMoreFlags(), ffFlag)...)...))
}

func runCommand() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "run a command with probes in it",
		ArgsUsage: "-- CMD [ARGS...]",
		Description: "The command's stdin, stdout, stderr and exit status pass through untouched; events go to\n" +
			"   stderr (or -o FILE). Examples:\n" +
			"   utap run -e 'work(arg1, arg2)' -- ./myprog\n" +
			"   utap run -e 'libc:open(str(arg1), arg2:x)' -e 'return:libc:open(ret)' -- cat /etc/hostname\n" +
			"   utap run --backend ptrace -f -e 'libc:malloc(arg1) if arg1 > 4096' -- make\n" +
			"   utap run -E 'malloc+free@libc.so*' -x 'work*' -tt -- ./myprog     ltrace's filters (--ltrace-e, -x, -l)",
		Flags:  traceFlags(),
		Action: func(c *cli.Context) error { return trace(c, false) },
	}
}

func attachCommand() *cli.Command {
	return &cli.Command{
		Name:  "attach",
		Usage: "attach probes to running processes until Ctrl-C, SIGTERM or --duration",
		Description: "On exit every probe is removed and the processes run on untouched. Examples:\n" +
			"   utap attach -p 1234 -e 'libc:malloc(arg1)' --duration 10s\n" +
			"   utap attach -p 1234,1240 -e 'handle_request' -o trace.jsonl --format json",
		Flags: append(traceFlags(),
			&cli.StringFlag{Name: "p", Usage: "process `PID[,PID...]` to attach to (required)"},
			&cli.DurationFlag{Name: "duration", Usage: "detach after `D` (e.g. 10s)"},
		),
		Action: func(c *cli.Context) error { return trace(c, true) },
	}
}

// engineConfig is the engine's configuration from the flags; sync: the
// trace shares the command's terminal (sharedTerminal).
func engineConfig(c *cli.Context, info func(string), sync bool) probe.Config {
	cfg := probe.Config{Info: info, SlowWakeups: c.Bool("slow-wakeups"), NoSeccomp: c.Bool("no-seccomp"), NoPads: c.Bool("no-pads"), Lossy: c.Bool("lossy"),
		Sync: sync}
	if c.Bool("v") {
		cfg.Verbose = func(line string) { fmt.Fprintf(os.Stderr, "utap: %s\n", line) }
	}
	return cfg
}

func trace(c *cli.Context, attach bool) error {
	if attach && c.String("p") == "" {
		// Checked here, not as a required flag: urfave/cli prints the
		// whole help before that error.
		return fmt.Errorf("attach: give the process to attach to with -p PID (see 'utap attach --help')")
	}
	if !isTracer {
		return supervise()
	}
	if n := btoi(c.Bool("c")) + btoi(c.Bool("C")) + btoi(c.Bool("count-only")); n > 1 {
		return fmt.Errorf("-c, -C and --count-only are exclusive: -c times calls, -C also prints the events, --count-only only counts")
	}
	filter, err := statusFlags(c)
	if err != nil {
		return err
	}
	if note, err := elfsym.SetLtraceConfigs(c.StringSlice("F")); err != nil {
		return err
	} else if note != "" && !c.Bool("q") {
		fmt.Fprintf(os.Stderr, "utap: %s\n", note)
	}
	specs, rs, err := readAllSpecs(c, filter)
	if err != nil {
		return err
	}
	aggs, err := newAggregations(c, specs)
	if err != nil {
		return err
	}
	weight, err := profileWeight(c)
	if err != nil {
		return err
	}
	timed := c.Bool("T") || c.Bool("c") || c.Bool("C") || weight == profile.Time
	if c.Bool("entry-only") && (timed || c.Bool("count-only")) {
		return fmt.Errorf("--entry-only cannot go with -T, -c, -C (they time calls with return probes) or --count-only (already entry-only)")
	}
	var untimed []string
	var calls map[int]int
	if !c.Bool("entry-only") && !c.Bool("count-only") {
		// As ltrace, a call shows its return value: two probe hits per call.
		var notTimed []string
		specs, notTimed, calls = withReturns(specs)
		if timed {
			untimed = notTimed
		}
	}
	typed := typedReturns(specs)
	var t probe.Target
	var resolveTarget elfsym.Target
	if attach {
		if c.Args().Len() > 0 {
			return fmt.Errorf("attach takes no command (got %q); use utap run -- CMD", c.Args().First())
		}
		if c.IsSet("u") {
			return fmt.Errorf("-u %s runs a command as that user: utap run -u USER -- CMD (an attached process keeps its own)", c.String("u"))
		}
		if commandEnv(c) != nil {
			return fmt.Errorf("-E VAR=VAL sets a command's environment: utap run -E VAR=VAL -- CMD (an attached process keeps its own)")
		}
		if t.PIDs, err = parsePIDs(c.String("p")); err != nil {
			return err
		}
		for _, pid := range t.PIDs {
			// Before its image is read: a zombie or a kernel thread has
			// none, and "does not exist" would be wrong.
			if isTracer && pid == os.Getppid() {
				return proc.ItselfError(pid) // the supervisor (supervise.go)
			}
			if err := proc.CheckLeader(pid); err != nil {
				return err
			}
		}
		resolveTarget.PID = t.PIDs[0]
	} else {
		if c.Args().Len() == 0 {
			return fmt.Errorf("run needs a command: utap run -e SPEC -- CMD [ARGS...]")
		}
		t.Argv = c.Args().Slice()
		path, err := exec.LookPath(t.Argv[0])
		if err != nil {
			return fmt.Errorf("cannot run %q: %v", t.Argv[0], unwrapExec(err))
		}
		// A script's probes are the interpreter's: the kernel runs it.
		if resolveTarget.Exe, err = proc.Executable(path); err != nil {
			return fmt.Errorf("cannot run %q: %w", t.Argv[0], err)
		}
		t.Stdin, t.Stdout, t.Stderr = os.Stdin, os.Stdout, os.Stderr
		if t.Cred, err = userCred(c.String("u")); err != nil {
			return err
		}
		t.Env = commandEnv(c)
	}
	t.Follow = c.Bool("f") || c.Bool("ff")
	if !attach && !t.Follow {
		aggs.runs(t.Argv[0])
	}
	if t.StackDepth, err = stackDepth(c); err != nil {
		return err
	}
	if t.StackFP, err = stackFP(c); err != nil {
		return err
	}
	t.StackDepth = aggs.stackDepth(t.StackDepth)
	t.Aggregate, t.AggEvery = aggs != nil, c.Duration("interval")

	sites, err := resolveAll(rs, specs, resolveTarget, t.PIDs)
	if err != nil {
		return err
	}
	sysSites, err := syscallSites(specs)
	if err != nil {
		return err
	}
	sites = append(sites, sysSites...)
	t.StrSize = filter.captureSize(c.Int("s"))
	t.FdPaths = c.Bool("y") || len(c.StringSlice("P")) > 0 // -P: an fd's path, read while it is open
	t.ProcessEvents = len(sysSites) > 0 || ltraceEnds(c, sysSites)
	t.Borrow = true // the emit chain below keeps no event
	t.Pairs = true  // and takes a call in one event: what cannot, unpairs (probe.Unpaired)
	var enums enumNamer
	enums.add(sites)
	var va varargs
	va.add(sites)
	var calling *callers
	if c.Bool("i") {
		calling = newCallers(calls)
		calling.add(sites)
	}
	t.Resolve = func(pid int) ([]probe.Site, error) {
		s, err := rs.resolve(specs, elfsym.Target{PID: pid})
		enums.add(s)
		va.add(s)
		if calling != nil {
			calling.add(s)
		}
		return s, err
	}

	shared := sharedTerminal(c)
	backend, why, err := chooseBackend(c.String("backend"), sites, resolveTarget.Exe, padsWant{noPads: c.Bool("no-pads"), noSeccomp: c.Bool("no-seccomp"), stackDepth: t.StackDepth, pids: t.PIDs, terminal: shared})
	if err != nil {
		return err
	}
	info := func(line string) { fmt.Fprintf(os.Stderr, "utap: %s\n", line) }
	if c.Bool("q") {
		info = nil
	}
	if info != nil && why != "" {
		info(why)
	}
	aggs.notes(info)
	ltraceArrayNote(c, info)
	for _, n := range rs.takeNotes() {
		fmt.Fprintf(os.Stderr, "utap: %s\n", n) // what the trace leaves out: said even with -q
	}
	for _, u := range untimed {
		if info != nil {
			info(fmt.Sprintf("%q is not timed: its condition reads arguments, which a return probe no longer has (add a return probe, with a condition on ret, to time calls)", u))
		}
	}
	if c.Bool("Y") && backend.Name == "uprobe" && info != nil {
		info("-Y: the kernel engine's lines are written after its calls, and a thread gone by then shows no name (the ptrace engine stops it while it is there)")
	}
	cfg := engineConfig(c, info, shared)
	eng := backend.New(cfg)

	opts := output.Options{
		WallClock: c.Bool("tt"), StrLen: strLen(c.Int("s")), Durations: c.Bool("T"), LtraceEnds: ltraceEnds(c, sysSites),
		Calls: calls, Unpaired: unpaired, Indent: c.Int("n"), Clock: ltraceClock(c), Addr: ltraceAddr(c),
		StracePIDs: t.Follow || len(t.PIDs) > 1 || !onlySyscalls(specs) || c.Bool("always-show-pid"), FdPath: fdPathFlag(c),
		FilePIDs: toFile(c) && (t.Follow || len(t.PIDs) > 1),
		Weight:   weight, Sys: filter.sys,
	}
	var out io.Writer = os.Stderr // summaries, with -ff
	var fw output.Writer
	if c.Bool("ff") {
		fw, err = newPerTask(c.String("o"), c.String("format"), opts)
	} else {
		var closeOut func()
		if out, closeOut, err = openOutput(c.String("o")); err != nil {
			return err
		}
		defer closeOut()
		fw, err = output.New(c.String("format"), out, opts)
	}
	if err != nil {
		return err
	}
	w := output.Periodic(fw, flushEvery(c, out))

	ctx, stopped := interruptible(!attach)
	if d := c.Duration("duration"); d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	ctx, endTrace := context.WithCancel(ctx)
	defer endTrace()

	// A write error (a closed pipe, a full disk) ends the trace as a signal
	// would: probes removed, processes detached, one line saying why.
	var werr error
	emit := func(ev *probe.Event) {
		if werr == nil {
			if werr = w.Write(ev); werr != nil {
				endTrace()
			}
		}
	}
	var sum *summary.Summary
	switch {
	case c.Bool("c") || c.Bool("count-only"):
		sum = summary.New()
		emit = probe.Unpaired(sum.Add)
		// Counted in place where the engine can, unless its error count
		// would not be the typed one.
		t.Tally = kernelErrorsAgree(sites) && len(sysSites) == 0
	case c.Bool("C"):
		sum = summary.New()
		write, add := emit, probe.Unpaired(sum.Add)
		emit = func(ev *probe.Event) { write(ev); add(ev) }
	}
	untyped := emit
	emit = func(ev *probe.Event) {
		for e := ev; e != nil; e = e.Return { // a call's entry, then its return
			if calling != nil {
				calling.take(e)
			}
			va.take(e)
			enums.name(e)
			typed.event(e)
		}
		untyped(ev)
	}
	emit = filter.filtered(emit)
	emit = aggs.divert(emit)
	emit = symbolized(emit, t.StackDepth, warmTarget(resolveTarget, t.PIDs), backend.Name == "uprobe")
	stages := laneStages{filtered: !filter.none(), aggregated: aggs != nil, stacks: t.StackDepth > 0, summary: sum != nil, callers: calling != nil}
	t.Calls = newCallLane(stages, w, typed, &va, &enums, &werr, endTrace)
	t.Lines = w // a terminal's lines a batch at a time, where the engine reads batches
	stopInterval := aggs.every(c.Duration("interval"), out)
	res, err := eng.Trace(ctx, t, sites, emit)
	auto := c.String("backend") == "auto" || c.String("backend") == ""
	if fb := fallback(auto, backend, err); fb != nil {
		// Nothing ran traced: the kernel refused a probe as it went in.
		if info != nil {
			info(fallbackNotice(*fb, err))
		}
		eng = fb.New(cfg)
		res, err = eng.Trace(ctx, t, sites, emit)
	}
	stopInterval()
	if ferr := w.Close(); werr == nil {
		werr = ferr
	}
	if err == nil && werr == nil {
		werr = aggs.write(out)
	}
	if err != nil {
		return err
	}
	if sum != nil {
		for _, tl := range res.Tallies {
			sum.AddTally(tl)
		}
		if c.String("format") == "json" {
			werr = sum.WriteJSON(out)
		} else {
			werr = sum.WriteText(out)
		}
	}
	if werr != nil {
		return fmt.Errorf("writing events: %w", werr)
	}
	// What the trace could not show changes what its output means: said
	// even with -q, which only silences informational lines.
	if res.Lost > 0 {
		fmt.Fprintf(os.Stderr, "utap: %d events lost\n", res.Lost)
	}
	if n := aggs.leftOut(); n != "" {
		fmt.Fprintf(os.Stderr, "utap: %s\n", n)
	}
	for _, n := range res.Notices {
		fmt.Fprintf(os.Stderr, "utap: %s\n", n)
	}
	sig := stopped()
	if !attach && res.ExitCode == -1 {
		// Stopped before the command ended: it runs on untraced.
		return exitError{128 + int(sig)}
	}
	if attach && sig != 0 && sig != syscall.SIGINT && sig != syscall.SIGTERM {
		// Not the user's usual way to end a trace: say which signal did.
		return exitError{128 + int(sig)}
	}
	if !attach && res.ExitCode != 0 {
		return exitError{res.ExitCode}
	}
	return nil
}

// resolveAll resolves specs against the executable, or against every
// attached process (they may run different programs).
func resolveAll(rs *resolver, specs []*probe.Spec, t elfsym.Target, pids []int) ([]probe.Site, error) {
	if len(pids) <= 1 {
		return rs.resolve(specs, t)
	}
	var all []probe.Site
	seen := map[[2]any]bool{}
	for _, pid := range pids {
		sites, err := rs.resolve(specs, elfsym.Target{PID: pid})
		if err != nil {
			return nil, err
		}
		for _, s := range sites {
			k := [2]any{s.Object, s.Addr}
			if !seen[k] {
				seen[k] = true
				all = append(all, s)
			}
		}
	}
	return all, nil
}

// readSpecs reads the probes of -e, -S and --probes. With none but
// qualifiers (-e status=, signal=...) or none at all, strace's default
// when straceAll: every system call (strace CMD, strace -c, -f, -p).
func readSpecs(c *cli.Context, filter *eventFilter, straceAll bool) ([]*probe.Spec, error) {
	var specs []*probe.Spec
	texts := append(c.StringSlice("e"), qualifierTexts(c)...)
	if c.Bool("syscalls") || len(c.StringSlice("P")) > 0 && len(texts) == 0 && c.String("probes") == "" {
		texts = append(texts, "syscall:*") // strace -P PATH alone: every call, those on PATH shown
	}
	traced := false // a trace= (trace=none may select nothing)
	for _, text := range texts {
		more := []string{text}
		if st, ok, err := straceSpec(text); err != nil {
			return nil, err
		} else if ok {
			more, traced = st, true
		} else if ok, err := filter.qualifier(text); ok || err != nil {
			if err != nil {
				return nil, err
			}
			continue
		}
		for _, text := range more {
			s, err := probe.Parse(text)
			if err != nil {
				return nil, err
			}
			specs = append(specs, s)
		}
	}
	filter.environments()
	if file := c.String("probes"); file != "" {
		f, err := os.Open(file)
		if err != nil {
			return nil, fmt.Errorf("probes file: %w", err)
		}
		defer f.Close()
		more, err := probe.ParseFile(bufio.NewReader(f), file)
		if err != nil {
			return nil, err
		}
		specs = append(specs, more...)
	}
	if len(specs) == 0 && straceAll && !traced && c.String("probes") == "" {
		s, err := probe.Parse("syscall:*")
		if err != nil {
			return nil, err
		}
		specs = append(specs, s)
	}
	if len(specs) == 0 {
		return nil, fmt.Errorf("no probes: give at least one -e SPEC, -S or --probes FILE (see utap list to find functions)")
	}
	return specs, nil
}

func parsePIDs(s string) ([]int, error) {
	var pids []int
	for _, f := range strings.Split(s, ",") {
		pid, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || pid <= 0 {
			return nil, fmt.Errorf("-p %q: %q is not a process id", s, f)
		}
		pids = append(pids, pid)
	}
	return pids, nil
}
