//go:build linux && amd64

package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/urfave/cli/v2"
	"github.com/utap/utap/internal/output"
	"golang.org/x/sys/unix"
)

// openOutput opens -o's file: events go to stderr by default (as strace
// and ltrace print them), to stdout for "-", else to the file, opened for
// writing only (a FIFO or /dev/stdout read by another process must see
// its reader go).
func openOutput(path string) (io.Writer, func(), error) {
	switch path {
	case "":
		return os.Stderr, func() {}, nil
	case "-":
		return os.Stdout, func() {}, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
	if err != nil {
		return nil, nil, fmt.Errorf("-o: %w", err)
	}
	return f, func() { f.Close() }, nil
}

// toFile says whether the trace's lines go to one file (-o, not "-" nor
// -ff's per-task files), where strace and ltrace write a pid as "N ".
func toFile(c *cli.Context) bool {
	o := c.String("o")
	return o != "" && o != "-" && !c.Bool("ff")
}

// sharedTerminal says whether the trace's lines go to a terminal the
// command writes to as well (run mode, -o unset or "-", the command's
// stdout or stderr a terminal too) and show a line per event: the
// in-process pads then wait for each record's line (probe.Config.Sync),
// so that a call's line comes before what the command prints after it,
// as under strace and ltrace.
func sharedTerminal(c *cli.Context) bool {
	if c.Bool("ff") || c.Bool("c") || c.Bool("count-only") || c.Bool("lossy") {
		return false
	}
	return commandsTerminal(c)
}

// commandsTerminal says whether the trace's lines go to a terminal the
// command writes to as well (run mode, -o unset or "-", the command's
// stdout or stderr a terminal too), whatever the trace shows.
func commandsTerminal(c *cli.Context) bool {
	if c.Command.Name != "run" {
		return false
	}
	var out *os.File
	switch c.String("o") {
	case "":
		out = os.Stderr
	case "-":
		out = os.Stdout
	default:
		return false
	}
	return isTerminal(out) && (isTerminal(os.Stdout) || isTerminal(os.Stderr))
}

// terminalEvery is how soon a trace's lines reach a terminal the command
// does not write to (attach, -o /dev/tty, the command's output elsewhere):
// a write(2) per line was such a trace's pace (11 µs a call on a
// pseudo-terminal, against 1.5–1.9 µs written in batches,
// docs/benchmarks.md), and no output of the command's must come after
// them there.
const terminalEvery = 10 * time.Millisecond

// flushEvery is how soon the trace's lines written to out reach it: at
// once on a terminal the command writes to (a line must come before what
// the command prints next, as strace's do), within terminalEvery on
// another terminal, within 100 ms in a file or pipe.
func flushEvery(c *cli.Context, out io.Writer) time.Duration {
	f, ok := out.(*os.File)
	switch {
	case !ok || !isTerminal(f):
		return 100 * time.Millisecond
	case commandsTerminal(c):
		return 0
	}
	return terminalEvery
}

// isTerminal says whether f is a terminal.
func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

func unwrapExec(err error) error {
	if ee, ok := err.(*exec.Error); ok {
		return ee.Err
	}
	return err
}

// strLen is -s for the writers: 0 shows no string at all.
func strLen(n int) int {
	if n == 0 {
		return output.NoStrings
	}
	return n
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
