//go:build linux && amd64

// Command utap is a user-space dynamic tracer for Linux x86_64 with two
// engines, ptrace breakpoints and kernel uprobes, under one probe language.
package main

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"

	"github.com/urfave/cli/v2"
)

// exitError carries a process exit status out of a command (run mode exits
// with the traced command's status).
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func main() {
	if isTracer {
		// The tracer makes an event per record of the in-process pads,
		// millions a second at most: collecting less often halves their
		// cost (docs/benchmarks.md); its heap stays small.
		debug.SetGCPercent(400)
		startProfile() // stopped after the command's run, whatever exit follows
	}
	app := &cli.App{
		Name:  "utap",
		Usage: "trace function calls of Linux programs with ptrace breakpoints or kernel uprobes",
		Description: "utap places probes on functions of a program (entry, return, offsets, library functions),\n" +
			"fetches arguments, filters with C-like conditions and prints one line per call.\n" +
			"See 'utap COMMAND --help' and docs/spec.md for the probe language.",
		// Specs contain commas (work(a, b)): never split -e values on them.
		DisableSliceFlagSeparator: true,
		Version:                   version(),
		Commands:                  withUsageErrors([]*cli.Command{listCommand(), runCommand(), attachCommand(), compareCommand()}),
		OnUsageError:              usageError,
		CommandNotFound:           commandNotFound,
		ExitErrHandler:            func(*cli.Context, error) {},
	}
	err := app.Run(os.Args)
	stopProfile()
	var ee exitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		os.Exit(ee.code)
	default:
		fmt.Fprintf(os.Stderr, "utap: %v\n", err)
		os.Exit(2)
	}
}
