//go:build linux && amd64

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"
	"github.com/utap/utap/internal/syscalls"
	"github.com/utap/utap/probe"
)

// straceFlags are strace's flags that have no ltrace meaning.
func straceFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "syscalls", Aliases: []string{"S"}, Usage: "trace every system call, as strace does (the spec syscall:*; also the default when no probe is given); mixes with function probes, like ltrace -S"},
		&cli.BoolFlag{Name: "no-seccomp", Usage: "ptrace engine, run mode: never put a seccomp filter into the command, as attach never does (code written at run time then puts its process on stops at every call, where the filter would stop only its probed calls; a trace stopped early always detaches at once)"},
		&cli.BoolFlag{Name: "y", Usage: "show the path behind each file descriptor of a system call, 3</etc/hostname> (strace -y)"},
	}
}

// straceSpec turns strace's -e trace=LIST into syscall specs; other -e
// text is a probe spec. trace=none is an empty list.
func straceSpec(text string) ([]string, bool, error) {
	list, ok := strings.CutPrefix(text, "trace=")
	if !ok {
		list, ok = strings.CutPrefix(text, "t=")
	}
	if !ok {
		return nil, false, nil
	}
	if rest, ok := strings.CutPrefix(list, "!"); ok {
		// !a,b is every call but a and b: one spec, its list negated.
		return []string{"syscall:!" + strings.ReplaceAll(rest, " ", "")}, true, nil
	}
	var out []string
	for _, name := range strings.Split(list, ",") {
		switch name = strings.TrimSpace(name); name {
		case "", "none":
			continue
		case "all":
			name = "*"
		}
		names, err := straceNames(name)
		if err != nil {
			return nil, true, err
		}
		for _, n := range names {
			out = append(out, "syscall:"+n)
		}
	}
	return out, true, nil
}

func onlySyscalls(specs []*probe.Spec) bool {
	for _, s := range specs {
		if !s.Syscall {
			return false
		}
	}
	return true
}

// syscallSites makes the sites of the system call specs: one per call a
// spec's name, glob or class selects, bound to the call's arguments.
func syscallSites(specs []*probe.Spec) ([]probe.Site, error) {
	var sites []probe.Site
	for i, spec := range specs {
		if !spec.Syscall {
			continue
		}
		infos, err := syscalls.Select(spec.Symbol)
		if err != nil {
			return nil, fmt.Errorf("spec %q: %w", spec.Text, err)
		}
		var firstErr error
		n := len(sites)
		for _, info := range infos {
			s := probe.Site{Spec: spec, Probe: i, Func: info.Name, Syscall: true, SyscallNr: info.Nr}
			for _, a := range info.Args {
				s.Params = append(s.Params, a.Name)
			}
			if err := s.Bind(); err != nil {
				// A glob's calls need not all take the argument a
				// condition reads: keep those that do.
				if firstErr == nil {
					firstErr = err
				}
				continue
			}
			sites = append(sites, s)
		}
		if len(sites) == n {
			return nil, firstErr
		}
	}
	return sites, nil
}

// fdPath is -y's path of a file descriptor, read from /proc.
func fdPath(pid, fd int) string {
	p, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/fd/" + strconv.Itoa(fd))
	if err != nil {
		return ""
	}
	return p
}

func fdPathFlag(c *cli.Context) func(pid, fd int) string {
	if c.Bool("y") || c.Bool("yy") {
		return fdPath
	}
	return nil
}

// listSyscalls is `utap list syscall:PATTERN`: the calls a syscall: spec
// with that pattern selects, with their arguments' names and types.
func listSyscalls(c *cli.Context, pattern string) error {
	if pattern == "" {
		pattern = "*"
	}
	infos, err := syscalls.Select(pattern)
	if err != nil {
		return fmt.Errorf("list: %w", err)
	}
	if c.String("format") == "json" {
		enc := json.NewEncoder(os.Stdout)
		for _, in := range infos {
			type arg struct{ Name, Type string }
			var args []arg
			for _, a := range in.Args {
				args = append(args, arg{a.Name, a.CType})
			}
			if err := enc.Encode(struct {
				Nr   int    `json:"nr"`
				Name string `json:"name"`
				Args []arg  `json:"args"`
			}{in.Nr, in.Name, args}); err != nil {
				return err
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "NR\tSYSCALL\tARGUMENTS\n")
	for _, in := range infos {
		var args []string
		for i, a := range in.Args {
			args = append(args, fmt.Sprintf("arg%d %s %s", i+1, strings.TrimSpace(a.CType), a.Name))
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\n", in.Nr, in.Name, strings.Join(args, ", "))
	}
	return tw.Flush()
}
