//go:build linux && amd64

package main

import (
	"github.com/urfave/cli/v2"
	"github.com/utap/utap/probe"
)

// ltraceEnds says whether a text trace of functions only shows the
// signals and the processes' ends as ltrace does ("--- SIGUSR1 (User
// defined signal 1) ---", "+++ exited (status 0) +++", a call cut by one
// "<no return ...>"); a trace with system calls shows strace's lines, and
// summaries (-c) and aggregations none.
func ltraceEnds(c *cli.Context, sysSites []probe.Site) bool {
	return len(sysSites) == 0 && c.String("format") == "text" &&
		!c.Bool("c") && !c.Bool("C") && !c.Bool("count-only")
}
