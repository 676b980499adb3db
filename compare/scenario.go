//go:build linux && amd64

package compare

import (
	"fmt"
	"strings"
)

// Cond is a scenario's probe condition.
type Cond uint8

const (
	CondNone  Cond = iota
	CondFalse      // second argument != TargetB: the probe traps, never reports
	CondTrue       // second argument == TargetB, with both arguments fetched
)

// Scenario is one way of probing the workload. New scenarios plug in here
// and in each Tool's Plan.
type Scenario struct {
	Name  string // short, for --scenario and tables
	Title string // one line for people

	Mode    string // workload mode: ModeCall or ModeSyscall
	Threads int    // workload threads
	Probes  int    // probes installed: the target plus Probes-1 never-called functions
	Fetch   bool   // fetch the target's two arguments
	Return  bool   // a return probe as well as the entry probe
	Cond    Cond
	// Count counts the target's calls inside the tool (a BPF map, a
	// tracer's table) and reports the total at exit: no event leaves the
	// probe, so the row is the cost of the hit alone. With Return, each
	// call's duration too (a summary table: -c).
	Count bool
	// Lines: the trace a user types, a text line per call with its
	// arguments and return value (utap's default, no --entry-only, as
	// ltrace's); with Fetch and Return, the peers' rows as theirs.
	Lines bool

	// Scaling rows run utap's engines only: they ask how utap's cost grows.
	Scaling bool
	// Attach rows time attaching Probes probes to a waiting process and
	// detaching them again, in ms per 1,000 probes (utap and bpftrace).
	Attach bool

	// Specs are the user's own probes, for the user's own command
	// (Workload.User); Expect is how many events a run should report.
	Specs  []string
	Expect Expect
}

// Expected is how many events a run making calls calls should report.
func (s Scenario) Expected(calls int) int {
	if s.Specs != nil {
		return s.Expect.At(calls)
	}
	return calls * s.EventsPerCall()
}

// EventsPerCall is how many events one call of the target should report.
func (s Scenario) EventsPerCall() int {
	switch {
	case s.Cond == CondFalse, s.Attach, s.Mode == ModeSyscallOther:
		return 0
	case s.Return && !s.Count:
		return 2
	}
	return 1
}

// Scenarios lists every scenario in report order; --scenario picks by Name
// or by group (threads, probes, attach).
func Scenarios() []Scenario {
	base := Scenario{Mode: ModeCall, Threads: 1, Probes: 1}
	with := func(name, title string, f func(*Scenario)) Scenario {
		s := base
		s.Name, s.Title = name, title
		f(&s)
		return s
	}
	list := []Scenario{
		with("entry", "entry probe, no fetch", func(*Scenario) {}),
		with("count", "entry probe counted in place (bpftrace @c = count(), ltrace -c, gdb ignore count, perf stat)", func(s *Scenario) { s.Count = true }),
		with("fetch", "entry probe fetching two arguments", func(s *Scenario) { s.Fetch = true }),
		with("summary", "calls counted and timed in place, a table at exit (utap -c, ltrace -c, bpftrace @ns = hist(nsecs - @start[tid]))",
			func(s *Scenario) { s.Count, s.Return = true, true }),
		with("return", "entry and return probes (2 events per call)", func(s *Scenario) { s.Return = true }),
		with("calls", "the trace a user types: a text line per call, two arguments and the return value (utap's default, ltrace's)",
			func(s *Scenario) { s.Fetch, s.Return, s.Lines = true, true, true }),
		with("cond-false", "condition always false (0 events: the cost of a filtered hit)", func(s *Scenario) { s.Cond = CondFalse }),
		with("cond-true", "condition always true, two arguments fetched", func(s *Scenario) { s.Cond, s.Fetch = CondTrue, true }),
		with("syscall", "the getppid system call (strace's home ground)", func(s *Scenario) { s.Mode = ModeSyscall }),
		with("syscall-mix", fmt.Sprintf("getppid traced among %d untraced getuid calls each (what a seccomp filter saves)", MixUntraced),
			func(s *Scenario) { s.Mode = ModeSyscallMix }),
		with("syscall-untraced", "getppid probed, only getuid called (0 events: the cost of an untraced system call)",
			func(s *Scenario) { s.Mode = ModeSyscallOther }),
		with("usdt", "a USDT probe (sys/sdt.h) where the call was, counted in place", func(s *Scenario) { s.Mode, s.Count = ModeUSDT, true }),
	}
	for _, t := range []int{2, 4, 8} {
		list = append(list, with(fmt.Sprintf("threads-%d", t), fmt.Sprintf("entry probe, %d threads calling", t), func(s *Scenario) {
			s.Threads, s.Scaling = t, true
		}))
	}
	for _, p := range []int{100, 1000} {
		list = append(list, with(fmt.Sprintf("probes-%d", p), fmt.Sprintf("entry probe among %d installed probes", p), func(s *Scenario) {
			s.Probes, s.Scaling = p, true
		}))
	}
	list = append(list, with("attach-1000", "attach and detach of 1,000 probes in a waiting process", func(s *Scenario) {
		s.Probes, s.Scaling, s.Attach = 1000, true, true
	}))
	return list
}

// SelectScenarios picks scenarios by name or group prefix ("threads" picks
// threads-2, -4 and -8); "all" or nothing picks every one.
func SelectScenarios(names []string) ([]Scenario, error) {
	all := Scenarios()
	if len(names) == 0 {
		return all, nil
	}
	var out []Scenario
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "all" {
			return all, nil
		}
		found := false
		for _, s := range all {
			if s.Name == n || strings.HasPrefix(s.Name, n+"-") && (n == "threads" || n == "probes" || n == "attach") {
				out = append(out, s)
				found = true
			}
		}
		if !found {
			var known []string
			for _, s := range all {
				known = append(known, s.Name)
			}
			return nil, fmt.Errorf("unknown scenario %q (known: %s, threads, probes, attach, all)", n, strings.Join(known, ", "))
		}
	}
	return out, nil
}
