//go:build linux && amd64

package uprobe

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/cilium/ebpf/features"
	"github.com/utap/utap/internal/proc"
	"github.com/utap/utap/internal/ustack"
	"github.com/utap/utap/probe"
	"github.com/utap/utap/uretprobe"
	"golang.org/x/sys/unix"
)

// Engine traces with kernel uprobes. The zero value is ready to use.
type Engine struct {
	// RingSize is the ring buffer's size in bytes, a power of two and a
	// multiple of the page size; 0 means 16 MiB.
	RingSize int
	// NoMulti attaches one perf-link uprobe per site even where a
	// uprobe_multi link could carry many.
	NoMulti bool
	// RetProbes implements every return probe with uprobes on the
	// function's RET instructions, as for Go, instead of kernel uretprobes:
	// no nesting limit (the kernel sees the returns of only the outermost
	// 64 nested probed calls of a thread), but a return made by a tail
	// call out of the function is not seen.
	RetProbes bool
	// Verbose receives lines on how the probes are placed (-v); nil: none.
	Verbose func(string)
}

var _ probe.Engine = (*Engine)(nil)

// Backend is the uprobe engine for the CLI.
var Backend = probe.Backend{
	Name:      "uprobe",
	Available: Available,
	Check:     Check,
	New:       func(c probe.Config) probe.Engine { return &Engine{Verbose: c.Verbose} },
}

func (*Engine) Name() string { return "uprobe" }

// Trace implements probe.Engine.
//
// Without Follow, links filter on each traced PID, so the kernel installs
// breakpoints in those processes only (one link per PID when there are
// several). With Follow, links cover every process that maps the object and
// the programs check a tgid map that a fork tracker fills: a filter in BPF
// costs other processes a trap per hit, a price only Follow pays. A traced
// process that execs is traced in its new image, as strace does, -f or
// not (exec.go).
func (e *Engine) Trace(ctx context.Context, t probe.Target, sites []probe.Site, emit func(*probe.Event)) (res probe.Result, err error) {
	if len(t.Argv) == 0 && len(t.PIDs) == 0 {
		return res, errors.New("uprobe: nothing to trace: no command and no PID")
	}
	if len(sites) == 0 {
		return res, errors.New("uprobe: no probe sites")
	}
	sites, sys := splitSyscalls(sites)
	retProbes := e.RetProbes || uretprobe.UsesUnwinder(t.Argv, objects(sites), t.PIDs)
	plans, err := planAll(sites, retProbes) // before anything starts
	if err != nil {
		return res, err
	}
	var held *child    // run mode, held once its libraries are loaded
	var notes []string // what this trace leaves out, said at its end
	// -k: run to the loader's rendezvous too, so that the maps taken
	// there name the libraries' frames (unless system calls before it
	// are asked for).
	if len(t.Argv) > 0 && t.Resolve != nil && (holdUntilLoaded(t, sites) || t.StackDepth > 0 && !t.StackFP && len(sys) == 0) {
		if held, sites, err = resolveLoaded(t); err != nil {
			return res, fmt.Errorf("uprobe: %w", err)
		}
		sites, _ = splitSyscalls(sites) // the same calls
		if len(sys) > 0 {
			notes = append(notes, "system calls made before the loader had mapped the libraries (where this engine's probes go in) are not shown; --backend ptrace shows them")
		}
		defer func() {
			if held != nil { // not handed to runCommand: an error came first
				held.kill()
			}
		}()
		if plans, err = planAll(sites, retProbes); err != nil { // the loader's choices
			return res, err
		}
	}
	c := specConfig{ringSize: e.RingSize, follow: t.Follow, execs: t.Follow || t.Resolve != nil, tally: t.Tally, v4: haveV4(), rd: kernelReads(), stack: stackConf{depth: t.StackDepth, fp: t.StackFP},
		multi: !e.NoMulti && features.HaveBPFLinkUprobeMulti() == nil, sys: sys, strSize: t.StrSize, fdPaths: t.FdPaths,
		proc: t.ProcessEvents && !t.Tally, agg: t.Aggregate && !t.Tally}
	switch {
	case t.Tally:
		c.ringSize = os.Getpagesize() // unused: counts stay in maps
	case c.ringSize == 0 && t.StackDepth > 0 && !t.StackFP:
		// A record with its stack copy is ≈16.5 KiB: 64 MiB holds ≈4,000
		// of them through a reader's stall (a library's line table).
		c.ringSize = stackRingSize
	}
	spec, err := newSpec(sites, plans, c)
	if err != nil {
		return res, fmt.Errorf("uprobe: %w", err)
	}
	if n := spec.sys.capNote(); n != "" {
		notes = append(notes, n)
	}
	s, err := load(spec, sites, t.Tally)
	if err != nil {
		return res, fmt.Errorf("uprobe: %w", err)
	}
	if s.aggs != nil {
		s.aggs.every = t.AggEvery
	}
	e.sayAggs(spec)
	defer func() {
		st, cerr := s.close()
		res.Lost = st[statLost]
		res.Tallies = s.counted
		res.Notices = append(notices(st, s.ended), s.ex.notices()...)
		if s.sysRunning > 0 {
			res.Notices = append(res.Notices, fmt.Sprintf("%d system calls never returned: not shown (their threads died in them, or their probes' conditions are known only at a return)", s.sysRunning))
		}
		res.Notices = append(res.Notices, notes...)
		if err == nil && cerr != nil {
			err = fmt.Errorf("uprobe: shutting down: %w", cerr)
		}
	}()
	if s.sys != nil {
		s.sys.fdPaths = t.FdPaths
		// Before any tgid is in the map: nothing is seen until then.
		if err := s.sys.attach(s.att); err != nil {
			return res, fmt.Errorf("uprobe: %w", err)
		}
	}
	if c.proc {
		if err := attachProc(s.objs, s.att); err != nil {
			return res, fmt.Errorf("uprobe: %w", err)
		}
	}
	if t.Follow {
		if err := s.followForks(); err != nil {
			return res, fmt.Errorf("uprobe: %w", err)
		}
	}
	if c.execs {
		if err := s.followExecs(t.Resolve, e.RetProbes, t.Follow, len(t.Argv) > 0); err != nil {
			if t.Follow {
				return res, fmt.Errorf("uprobe: %w", err)
			}
			// What worked before exec following still does: said, not fatal.
			notes = append(notes, fmt.Sprintf("execs of the traced process are not followed (%v): if it execs, its new image's calls are not seen; --backend ptrace sees them", err))
		}
	}
	if len(t.Argv) > 0 {
		c := held
		held = nil
		return s.runCommand(ctx, t, c, emit)
	}
	return res, s.attachPIDs(ctx, t, emit)
}

// sayAggs says, with -v, which aggregations are computed in the kernel
// and why the others come as events.
func (e *Engine) sayAggs(spec *Spec) {
	if e.Verbose == nil || len(spec.aggs)+len(spec.aggWhy) == 0 {
		return
	}
	e.Verbose(fmt.Sprintf("aggregated in the kernel: %d specs", len(spec.aggIn)))
	texts := make([]string, 0, len(spec.aggWhy))
	for t := range spec.aggWhy {
		texts = append(texts, t)
	}
	slices.Sort(texts)
	for _, t := range texts {
		e.Verbose(fmt.Sprintf("%s: aggregated from its events (%s)", t, spec.aggWhy[t]))
	}
}

// planAll plans every site once, refusing what this engine cannot probe
// faithfully; the plans are what the Spec is generated from.
func planAll(sites []probe.Site, retProbes bool) ([]plan, error) {
	plans := make([]plan, len(sites))
	for i := range sites {
		var err error
		if plans[i], err = checkedPlan(&sites[i], retProbes); err != nil {
			return nil, err
		}
	}
	return plans, nil
}

// refuseInsn is refuse, replaced by the test that verifies the refusals'
// claims against the running kernel.
var refuseInsn = refuse

// checkedPlan places s's probes and refuses the instructions the kernel
// mishandles.
func checkedPlan(s *probe.Site, retProbes bool) (plan, error) {
	if s.Spec == nil {
		return plan{}, fmt.Errorf("uprobe: site %s+%#x has no spec", s.Object, s.FileOffset)
	}
	p, err := planSite(s, retProbes)
	if errors.Is(err, uretprobe.ErrRefused) {
		// The ptrace engine hijacks where this one may not (a program
		// with an unwinder, whose returns this engine probes at RETs: a
		// PLT stub has none): auto goes there (probe.ErrUnprobeable).
		err = fmt.Errorf("%w: %w; use --backend ptrace", probe.ErrUnprobeable, err)
	}
	if err != nil {
		return p, fmt.Errorf("uprobe: probe %s: %w", s.Spec.Text, err)
	}
	for _, sp := range p.spots {
		if err := refuseInsn(sp.insn); err != nil {
			at := where(s)
			if sp.addr != s.Addr {
				at = fmt.Sprintf("%s+%#x", s.Func, sp.addr-s.FuncAddr)
			}
			return p, fmt.Errorf("uprobe: probe %s at %s: %w", s.Spec.Text, at, err)
		}
	}
	return p, nil
}

func where(s *probe.Site) string {
	if s.Func != "" && s.Addr >= s.FuncAddr {
		if s.Addr == s.FuncAddr {
			return s.Func
		}
		return fmt.Sprintf("%s+%#x", s.Func, s.Addr-s.FuncAddr)
	}
	return fmt.Sprintf("%#x", s.Addr)
}

// notices say what the trace could not show, beyond lost events.
// ended: calls their thread ended inside, which never return.
func notices(st stats, ended uint64) []string {
	var ns []string
	if n := st[statEntered] - min(st[statEntered], st[statReturned]+ended); n > 0 {
		ns = append(ns, fmt.Sprintf("%d returns not seen (calls nested deeper than the kernel's 64 uretprobes, left by longjmp or an exception, or still running)", n))
	}
	if n := st[statUncounted]; n > 0 {
		ns = append(ns, fmt.Sprintf("%d call durations left out of the summary (its histogram map is full)", n))
	}
	if n := st[statAggFull]; n > 0 {
		ns = append(ns, fmt.Sprintf("%d hits left out of the aggregations: their maps were full (%d keys each)", n, maxAggKeys))
	}
	if n := st[statUnheld]; n > 0 {
		ns = append(ns, fmt.Sprintf("%d execs of followed processes not held (the exec ring was full): their new images' first calls may be missing", n))
	}
	if n := st[statUnentered]; n > 0 {
		ns = append(ns, fmt.Sprintf("%d returns without their entry time (duration 0)", n))
	}
	return ns
}

// runCommand starts t.Argv held at exec, attaches, lets it run and waits
// for it to exit. When ctx is done first the probes go and the command runs
// on untraced (ExitCode -1): a tracer must not kill what it traces.
func (s *session) runCommand(ctx context.Context, t probe.Target, c *child, emit func(*probe.Event)) (probe.Result, error) {
	var res probe.Result
	var err error
	if c == nil {
		if c, err = startHeld(t); err != nil {
			return res, fmt.Errorf("uprobe: %w", err)
		}
	}
	err = s.attach([]int{c.pid()})
	if s.ex != nil && s.ex.link == nil {
		c.hold = newExecHold(t.Follow, s.ex.held)
		s.ex.hold = c.hold
	}
	if t.StackDepth > 0 {
		// Its frames are named by these maps if it exits before its
		// events are read (held here: its libraries are loaded when a
		// probe or -k asked for that).
		ustack.Remember(c.pid())
	}
	if err == nil {
		if ev := s.sys.execEvent(c); ev != nil {
			emit(ev) // before the reader starts: one goroutine emits at a time
		}
		err = s.startReading(emit)
	}
	if err == nil {
		err = c.run()
	}
	if err != nil {
		c.kill()
		return res, fmt.Errorf("uprobe: %w", err)
	}
	type exit struct {
		code int
		err  error
	}
	exited := make(chan exit, 1)
	go func() { code, err := c.wait(); exited <- exit{code, err} }()
	select {
	case e := <-exited:
		res.ExitCode, err = e.code, e.err
	case <-ctx.Done():
		res.ExitCode = -1
		return res, nil
	}
	// With Follow, the trace ends when the last followed process does.
	s.traced.await(ctx, c.pid())
	return res, err
}

// attachPIDs traces running processes until they have all exited or ctx
// is done; they keep running afterwards.
func (s *session) attachPIDs(ctx context.Context, t probe.Target, emit func(*probe.Event)) error {
	for _, pid := range t.PIDs {
		if err := proc.CheckLeader(pid); err != nil {
			return fmt.Errorf("uprobe: %w", err)
		}
	}
	if err := s.attach(t.PIDs); err != nil {
		return fmt.Errorf("uprobe: %w", err)
	}
	if err := s.holdExecs(t.PIDs); err != nil {
		return fmt.Errorf("uprobe: %w", err)
	}
	if t.StackDepth > 0 {
		for _, pid := range t.PIDs {
			ustack.Remember(pid) // for its frames if it exits before they are read
		}
	}
	if err := s.startReading(emit); err != nil {
		return fmt.Errorf("uprobe: %w", err)
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			if !anyAlive(t.PIDs) && !s.traced.prune() {
				return nil
			}
		}
	}
}

func anyAlive(pids []int) bool {
	for _, pid := range pids {
		if err := unix.Kill(pid, 0); !errors.Is(err, unix.ESRCH) {
			return true
		}
	}
	return false
}

// objects lists the distinct objects sites are in.
func objects(sites []probe.Site) []string {
	var objs []string
	for _, s := range sites {
		if !slices.Contains(objs, s.Object) {
			objs = append(objs, s.Object)
		}
	}
	return objs
}
