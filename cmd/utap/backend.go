//go:build linux && amd64

package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/utap/utap/probe"
	"github.com/utap/utap/ptrace"
	"github.com/utap/utap/uprobe"
)

// backends are the engines, in auto's order of preference: the kernel's
// uprobes when the machine and the sites allow, else the breakpoint engine
// (first when every site runs in-process: padsFirst).
var backends = []probe.Backend{uprobe.Backend, ptrace.Backend}

// padsWant is what auto needs to know of a trace to tell whether its
// every site would run in a ptrace pad.
type padsWant struct {
	noPads     bool  // --no-pads
	noSeccomp  bool  // --no-seccomp
	stackDepth int   // -k
	pids       []int // attach's processes
	// terminal: the trace shares the command's terminal (sharedTerminal),
	// where the ptrace engine keeps each call's line before what the
	// command prints next; the kernel engine's come as it reads them.
	terminal bool
}

// chooseBackend picks the engine for --backend and says why in one line
// (printed unless -q).
func chooseBackend(name string, sites []probe.Site, exe string, pw padsWant) (probe.Backend, string, error) {
	if name == "auto" || name == "" {
		if b, ok := padsFirst(sites, pw); ok {
			return b, "backend ptrace: every probe runs in-process (pads), faster than kernel uprobes (--backend uprobe for those)", nil
		}
		if b, ok := sysFirst(sites, exe, pw); ok {
			return b, "backend ptrace: system calls run in-process (pads), the others the program may make stop at a trap; faster here than the kernel engine (--backend uprobe for it)", nil
		}
	}
	if (name == "auto" || name == "") && loaderSyscalls(sites, exe) {
		b := backends[len(backends)-1]
		if err := check(b, sites); err != nil {
			return b, "", err
		}
		return b, "backend ptrace: with probes in libraries, the uprobe engine attaches once the loader has mapped them, " +
			"and would miss the system calls made until then", nil
	}
	if (name == "auto" || name == "") && pw.terminal {
		b := backends[len(backends)-1]
		if available(b) == nil && check(b, sites) == nil {
			return b, "backend ptrace: the trace shares the command's terminal, where it keeps each call's line before " +
				"what the command prints next (--backend uprobe for the kernel engine, -o FILE for the pads' full speed)", nil
		}
	}
	if name == "auto" || name == "" {
		first, second := backends[0], backends[1]
		err := available(first)
		if err == nil {
			err = check(first, sites)
		}
		if err == nil {
			return first, "backend uprobe (kernel uprobes; --backend ptrace for the breakpoint engine)", nil
		}
		if err2 := check(second, sites); err2 != nil {
			return second, "", err2 // nothing starts with a probe refused
		}
		return second, fallbackNotice(second, err), nil
	}
	for _, b := range backends {
		if b.Name != name {
			continue
		}
		if err := available(b); err != nil {
			return b, "", fmt.Errorf("--backend %s: %w (or use --backend ptrace)", name, err)
		}
		if err := check(b, sites); err != nil {
			return b, "", fmt.Errorf("--backend %s: %w", name, err)
		}
		if b.Name == backends[0].Name && pw.terminal {
			return b, "backend uprobe on the command's terminal: each call's line comes as utap reads it from the kernel, " +
				"after what the command printed meanwhile (--backend ptrace keeps their order)", nil
		}
		return b, "", nil
	}
	return probe.Backend{}, "", fmt.Errorf("unknown --backend %q (use auto, ptrace or uprobe)", name)
}

// padsFirst is the ptrace engine when every site would take its
// in-process pad (ptrace.PadsAll): no stop, no kernel entry per call.
func padsFirst(sites []probe.Site, pw padsWant) (probe.Backend, bool) {
	b := backends[len(backends)-1]
	if pw.noPads || available(b) != nil || ptrace.PadsAll(sites, pw.stackDepth, pw.pids) != nil || check(b, sites) != nil {
		return b, false
	}
	return b, true
}

// sysFirst is the ptrace engine for a command run to trace its system
// calls only: most calls are made in-process (pads), the others stop at
// an int3 (a trap, or behind a seccomp filter once the program writes
// code), and it starts at once, where the kernel engine's verifier takes
// a second to load its programs for -S (docs/benchmarks.md). Not in
// attach mode (a SIGKILLed tracer would leave its traps), nor with -k,
// --no-pads (the calls stop) or --no-seccomp (a JIT's calls would stop).
func sysFirst(sites []probe.Site, exe string, pw padsWant) (probe.Backend, bool) {
	b := backends[len(backends)-1]
	if exe == "" || len(sites) == 0 || pw.noPads || pw.noSeccomp || pw.stackDepth > 0 || available(b) != nil ||
		ptrace.PadsAvailable() != nil || check(b, sites) != nil {
		return b, false
	}
	for i := range sites {
		if !sites[i].Syscall {
			return b, false
		}
	}
	return b, true
}

func available(b probe.Backend) error {
	if b.Available == nil {
		return nil
	}
	return b.Available()
}

func check(b probe.Backend, sites []probe.Site) error {
	if b.Check == nil {
		return nil
	}
	return b.Check(sites)
}

// fallbackNotice says why auto picked b: the other engine's reason, less
// its advice to use --backend ptrace, which auto has just followed.
func fallbackNotice(b probe.Backend, err error) string {
	why := err.Error()
	for _, advice := range []string{"; use --backend ptrace", "; try --backend ptrace", " (or use --backend ptrace)"} {
		why = strings.ReplaceAll(why, advice, "")
	}
	return fmt.Sprintf("backend %s: %s", b.Name, why)
}

// fallback is the engine auto falls back to when its first choice refuses a
// site only once tracing began (probe.ErrUnprobeable), nil if none.
func fallback(auto bool, chosen probe.Backend, err error) *probe.Backend {
	if !auto || chosen.Name == backends[len(backends)-1].Name || !errors.Is(err, probe.ErrUnprobeable) {
		return nil
	}
	return &backends[len(backends)-1]
}

// loaderSyscalls says whether a run mixes system call probes with probes
// the uprobe engine can place only once the loader has mapped the
// libraries (in a library, or an IFUNC): it would miss the loader's own
// system calls, which strace users expect first. exe is the command's
// executable ("" in attach mode, where nothing is missed).
func loaderSyscalls(sites []probe.Site, exe string) bool {
	if exe == "" {
		return false
	}
	sys, lib := false, false
	est, err := os.Stat(exe)
	for i := range sites {
		s := &sites[i]
		if s.Syscall {
			sys = true
			continue
		}
		if s.IFunc {
			lib = true
		} else if st, serr := os.Stat(s.Object); err != nil || serr != nil || !os.SameFile(est, st) {
			lib = true
		}
	}
	return sys && lib
}
