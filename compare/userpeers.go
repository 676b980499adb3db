//go:build linux && amd64

package compare

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// The peers' plans for the user's own probes (Scenario.Specs): each spec
// becomes the tool's own probe on the same function entry, where the
// tool can express it (peerProbes says why not).

// gdbMarker starts every dprintf line: the user's program shares gdb's
// standard output and may print anything else.
const gdbMarker = "@utapcmp@"

func userLtrace(s Scenario, w *Workload) (*Plan, error) {
	ps, err := peerProbes(s.Specs, w.Exe)
	if err != nil {
		return nil, err
	}
	// An -e filter matching nothing turns the default tracing of every PLT
	// call off (-L would hide library symbols from -x as well); fn@LIB
	// picks a library's symbol.
	sel := []string{"-e", "utap_compare_nothing"}
	var calls []string
	for _, p := range ps {
		if p.Cond != nil {
			return nil, notApplicable("ltrace has no conditions")
		}
		x := p.Func
		if !p.Main {
			x += "@" + filepath.Base(p.Object)
		}
		sel = append(sel, "-x", x)
		calls = append(calls, p.Func)
	}
	return &Plan{
		Argv: func(wl []string, out string) []string {
			argv := append([]string{"ltrace", "-f"}, sel...)
			return append(append(argv, "-o", out, "--"), wl...)
		},
		Count: func(out, _ string) (int, error) { return countLines(out, ltraceCalls(calls)) },
	}, nil
}

// ltraceCalls counts a line of `ltrace -f -o` output as an event when it
// shows an entry of one of fns: "PID fn(args) = ret", "PID fn@lib(...",
// or "PID fn(args <unfinished ...>", but not "<... fn resumed>".
func ltraceCalls(fns []string) func(string) int {
	return func(l string) int {
		_, rest, _ := strings.Cut(l, " ")
		for _, fn := range fns {
			if r, ok := strings.CutPrefix(rest, fn); ok && (strings.HasPrefix(r, "(") || strings.HasPrefix(r, "@")) {
				return 1
			}
		}
		return 0
	}
}

func userGdb(s Scenario, w *Workload, ex []string) (*Plan, error) {
	ps, err := peerProbes(s.Specs, w.Exe)
	if err != nil {
		return nil, err
	}
	for _, p := range ps {
		format, args := gdbMarker, ""
		for _, r := range p.Regs {
			format += " %ld"
			args += "," + gdbReg(r)
		}
		ex = append(ex, fmt.Sprintf(`dprintf %s,"%s\n"%s`, p.Func, format, args))
		if c := p.Cond; c != nil {
			ex = append(ex, fmt.Sprintf("condition $bpnum %s %s %d", gdbReg(c.Reg), c.Op, c.Val))
		}
	}
	ex = append(ex, "run")
	return &Plan{
		Argv: gdbArgv(ex),
		Count: func(_, stdout string) (int, error) {
			return countLines(stdout, func(l string) int { return strings.Count(l, gdbMarker) })
		},
	}, nil
}

func userBpftrace(s Scenario, w *Workload) (*Plan, error) {
	if strings.ContainsAny(strings.Join(w.Args("N", 1, ""), ""), " \t'\"") {
		return nil, notApplicable("bpftrace -c splits its command at spaces; the command's arguments hold spaces or quotes")
	}
	ps, err := peerProbes(s.Specs, w.Exe)
	if err != nil {
		return nil, err
	}
	var prog []string
	for _, p := range ps {
		filter := "pid == cpid"
		if c := p.Cond; c != nil {
			filter += fmt.Sprintf(` && (int64)reg("%s") %s %d`, c.Reg, c.Op, c.Val)
		}
		format, args := "E", ""
		for _, r := range p.Regs {
			format += " %ld"
			args += fmt.Sprintf(`, reg("%s")`, r)
		}
		prog = append(prog, fmt.Sprintf(`uprobe:%s:%s /%s/ { printf("%s\n"%s); }`, p.Object, p.Func, filter, format, args))
	}
	text := strings.Join(prog, " ")
	return &Plan{
		Argv: func(wl []string, out string) []string {
			return []string{"bpftrace", "-q", "-o", out, "-e", text, "-c", strings.Join(wl, " ")}
		},
		Count: func(out, _ string) (int, error) { return countLines(out, prefixed("E")) },
	}, nil
}

func userPerf(s Scenario, w *Workload) (*Plan, error) {
	ps, err := peerProbes(s.Specs, w.Exe)
	if err != nil {
		return nil, err
	}
	type def struct{ obj, event, text, filter string }
	var defs []def
	for i, p := range ps {
		event := fmt.Sprintf("%s:user%d", perfGroup, i)
		text := fmt.Sprintf("user%d=%s", i, p.Func)
		for k, r := range p.Regs {
			text += fmt.Sprintf(" a%d=%%%s:s64", k, r)
		}
		d := def{obj: p.Object, event: event}
		if c := p.Cond; c != nil {
			text += fmt.Sprintf(" c=%%%s:s64", c.Reg)
			d.filter = fmt.Sprintf("c %s %d", c.Op, c.Val)
		}
		d.text = text
		defs = append(defs, d)
	}
	var shown []string
	for _, d := range defs {
		shown = append(shown, "perf probe -x "+d.obj+" -a '"+perfGroup+":"+d.text+"'")
	}
	return &Plan{
		Argv: func(wl []string, out string) []string {
			argv := []string{"perf", "stat", "-x,", "-o", out}
			for _, d := range defs {
				argv = append(argv, "-e", d.event)
				if d.filter != "" {
					argv = append(argv, "--filter", d.filter)
				}
			}
			return append(append(argv, "--"), wl...)
		},
		Count: func(out, _ string) (int, error) {
			events := make([]string, len(defs))
			for i, d := range defs {
				events[i] = d.event
			}
			return countLines(out, perfCounts(events))
		},
		Shown: strings.Join(shown, "; ") + "; ",
		Setup: func() error {
			for _, d := range defs {
				// A probe left by an interrupted run would make -a fail.
				exec.Command("perf", "probe", "-q", "-d", d.event).Run()
				args := []string{"probe", "-q", "-x", d.obj, "-a", perfGroup + ":" + d.text}
				if out, err := exec.Command("perf", args...).CombinedOutput(); err != nil {
					return fmt.Errorf("perf %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
				}
			}
			return nil
		},
		Cleanup: func() error {
			for _, d := range defs {
				exec.Command("perf", "probe", "-q", "-d", d.event).Run()
			}
			return nil
		},
	}, nil
}
