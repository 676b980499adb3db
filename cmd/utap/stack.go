//go:build linux && amd64

package main

import (
	"fmt"

	"github.com/urfave/cli/v2"
	"github.com/utap/utap/elfsym"
	"github.com/utap/utap/internal/output"
	"github.com/utap/utap/probe"
)

// -k and --stack-depth: each event carries the user stack at the probe
// (strace -k, ltrace -w N, bpftrace's ustack), asked of the engine as
// probe.Target.StackDepth and named here, in one place for both engines.
var (
	stackFlag      = &cli.BoolFlag{Name: "k", Usage: "show the user stack at each probe, innermost first (strace -k): function+offset, object, file:line when DWARF has it"}
	stackDepthFlag = &cli.IntFlag{Name: "stack-depth", Value: probe.DefaultStackDepth, Usage: "with -k, show at most `N` frames (with a profile format, 64 by default)"}
	stackModeFlag  = &cli.StringFlag{Name: "stack-mode", Value: "dwarf", Usage: "with -k on the uprobe engine, `MODE` dwarf (copy registers and 16 KiB of stack per event, unwound with DWARF CFI as the ptrace engine does) or fp (the kernel's frame-pointer walk: cheaper, stops early in code built without frame pointers)"}
)

// stackFP is Target.StackFP: --stack-mode fp.
func stackFP(c *cli.Context) (bool, error) {
	switch m := c.String("stack-mode"); m {
	case "dwarf":
		return false, nil
	case "fp":
		return true, nil
	default:
		return false, fmt.Errorf("--stack-mode %q: give dwarf or fp", m)
	}
}

// stackDepth is Target.StackDepth for the command line: 0 without -k.
func stackDepth(c *cli.Context) (int, error) {
	if c.IsSet("w") { // ltrace's -w N
		if n := c.Int("w"); n < 1 || n > maxStackDepth {
			return 0, fmt.Errorf("-w %d: give 1 to %d frames", n, maxStackDepth)
		}
		return c.Int("w"), nil
	}
	n := c.Int("stack-depth")
	if !c.Bool("k") {
		switch {
		case output.IsProfile(c.String("format")): // a profile by stack implies -k
			if !c.IsSet("stack-depth") {
				n = profileStackDepth
			}
		case c.IsSet("stack-depth"):
			return 0, fmt.Errorf("--stack-depth goes with -k")
		default:
			return 0, nil
		}
	}
	if n < 1 || n > maxStackDepth {
		return 0, fmt.Errorf("--stack-depth %d: give 1 to %d frames", n, maxStackDepth)
	}
	return n, nil
}

// maxStackDepth bounds --stack-depth: the uprobe engine's record holds
// the stack (bpf_get_stack), and the kernel's own limit is 127
// (kernel.perf_event_max_stack).
const maxStackDepth = 127

// symbolized names the frames of each event's stack before emit writes it.
// The objects of target are loaded first, before the trace starts, when
// the engine buffers events it cannot hold back (wait): a reader stalled
// on a large line table (python's takes ≈0.4 s) lets the kernel engine's
// ring overflow; else meanwhile, while the engine sets up.
func symbolized(emit func(*probe.Event), depth int, target elfsym.Target, wait bool) func(*probe.Event) {
	if depth <= 0 {
		return emit
	}
	sym := new(elfsym.Symbolizer)
	if wait {
		sym.Warm(target)
	} else {
		go sym.Warm(target)
	}
	return probe.Unpaired(func(ev *probe.Event) {
		if len(ev.Stack) > 0 {
			sym.Symbolize(ev.PID, ev.Stack)
		}
		emit(ev)
	})
}

// warmTarget is what the symbolizer loads ahead: the executable run and
// its libraries, or the first process attached.
func warmTarget(run elfsym.Target, pids []int) elfsym.Target {
	if len(pids) > 0 {
		return elfsym.Target{PID: pids[0]}
	}
	return run
}
