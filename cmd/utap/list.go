//go:build linux && amd64

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"
	"github.com/utap/utap/elfsym"
)

func listCommand() *cli.Command {
	return &cli.Command{
		Name:      "list",
		Usage:     "list the probe-able functions and static probes (USDT) of a program, a library or a running process",
		ArgsUsage: "[BINARY] [PATTERN] | syscall:PATTERN",
		Description: "Examples:\n" +
			"   utap list ./myprog 'work*'         functions of a program and its libraries matching work*\n" +
			"   utap list --pid 1234 malloc        malloc in process 1234, with its loaded address\n" +
			"   utap list libc malloc              a library by its short name (or its path)\n" +
			"   utap list /usr/bin/python3.11 'python:*'   static probes (USDT) by provider:name, with their arguments\n" +
			"   utap list ./myprog 'usdt:*'        only the static probes\n" +
			"   utap list --format json libc 'str*'   JSON lines (flags come before BINARY and PATTERN)\n" +
			"   utap list 'syscall:open*'          system calls: number, arguments (the names conditions may use), classes\n" +
			"   PAD: whether the entry's instructions take the ptrace engine's in-process pad (--format json says why\n" +
			"   not; utap run -v says it of each probe, whose return probes or stacks keep a breakpoint too)",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "pid", Aliases: []string{"p"}, Usage: "list what is loaded in process `PID`"},
			&cli.StringFlag{Name: "format", Value: "text", Usage: "text (an aligned table) or json (one object a line)"},
		},
		Action: runList,
	}
}

func runList(c *cli.Context) error {
	t := elfsym.Target{PID: c.Int("pid")}
	args := c.Args().Slice()
	if len(args) == 1 && strings.HasPrefix(args[0], "syscall:") {
		return listSyscalls(c, strings.TrimPrefix(args[0], "syscall:"))
	}
	if t.PID == 0 {
		if len(args) == 0 {
			return fmt.Errorf("list needs a BINARY or --pid PID (see utap list --help)")
		}
		t.Exe, args = args[0], args[1:]
		if _, err := os.Stat(t.Exe); err != nil && !strings.Contains(t.Exe, "/") {
			if lib, ok := elfsym.LibraryPath(t.Exe); ok {
				t.Exe = lib // a library by its short name: libc
			}
		}
	}
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			return fmt.Errorf("list: flag %s after BINARY or PATTERN: flags come first (utap list %s ...)", a, a)
		}
	}
	pattern := ""
	switch len(args) {
	case 0:
	case 1:
		pattern = args[0]
	default:
		return fmt.Errorf("list takes one PATTERN, got %q", strings.Join(args, " "))
	}
	format := c.String("format")
	if format != "text" && format != "json" {
		return fmt.Errorf("unknown --format %q (use text or json)", format)
	}
	syms, err := elfsym.List(t, pattern)
	if err != nil {
		return err
	}
	if len(syms) == 0 && pattern != "" {
		return fmt.Errorf("no function or USDT probe matches %q (try a glob such as '%s*')", pattern, pattern)
	}
	pads := padEntries(syms)
	if format == "json" {
		enc := json.NewEncoder(os.Stdout)
		for i := range pads {
			if err := enc.Encode(&pads[i]); err != nil {
				return err
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 8, 2, ' ', 0)
	addrHeader := "ADDRESS"
	if t.PID != 0 {
		addrHeader = "LOADED AT"
	}
	paramsHeader := "PARAMS"
	for _, s := range syms {
		if s.Kind == "usdt" {
			paramsHeader = "PARAMS/ARGS"
			break
		}
	}
	fmt.Fprintf(tw, "OBJECT\tNAME\tKIND\t%s\tSIZE\tPAD\t%s\n", addrHeader, paramsHeader)
	for i, s := range syms {
		addr := s.Addr
		if t.PID != 0 && s.Runtime != 0 {
			addr = s.Runtime
		}
		params := strings.Join(s.Params, ", ")
		if s.Kind == "usdt" {
			// A static probe's arguments are its operands, arg1..argN.
			params = strings.Join(s.Args, " ")
			if s.Semaphore != 0 {
				params = strings.TrimSpace(params + fmt.Sprintf("  semaphore %#x", s.Semaphore))
			}
		}
		pad := "no"
		if pads[i].Pad {
			pad = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%#x\t%d\t%s\t%s\n", s.Object, s.Name, s.Kind, addr, s.Size, pad, params)
	}
	return tw.Flush()
}
