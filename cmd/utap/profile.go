//go:build linux && amd64

package main

import (
	"fmt"
	"os"

	"github.com/urfave/cli/v2"
	"github.com/utap/utap/internal/output"
	"github.com/utap/utap/internal/profile"
)

// The profile formats (--format pprof, folded, flamegraph) count calls by
// user stack, so they imply -k; --weight says what a flame graph's widths
// (and the sample type pprof shows first) measure.
var weightFlag = &cli.StringFlag{Name: "weight", Usage: "with --format pprof, folded or flamegraph: weigh stacks by `calls` (the default) or time (the calls' total duration, from their return probes)"}

// profileStackDepth is -k's depth for a profile without --stack-depth:
// deeper than a trace's, since a flame graph cut short loses its roots.
const profileStackDepth = 64

// profileWeight checks the flags that go with a profile format and returns
// what it weighs stacks by.
func profileWeight(c *cli.Context) (profile.Value, error) {
	format := c.String("format")
	if !output.IsProfile(format) {
		if c.IsSet("weight") {
			return 0, fmt.Errorf("--weight goes with --format pprof, folded or flamegraph")
		}
		return profile.Calls, nil
	}
	if c.Bool("c") || c.Bool("C") || c.Bool("count-only") {
		return 0, fmt.Errorf("--format %s cannot go with -c, -C or --count-only: the profile already counts calls (by stack)", format)
	}
	if format != "folded" {
		switch o := c.String("o"); {
		case o == "":
			return 0, fmt.Errorf("--format %s needs -o FILE (e.g. -o %s)", format, profileFile(format))
		case o == "-" && isTerminal(os.Stdout) && format == "pprof":
			return 0, fmt.Errorf("--format pprof writes binary: give -o FILE, or pipe -o - elsewhere than a terminal")
		}
	}
	switch c.String("weight") {
	case "", "calls":
		return profile.Calls, nil
	case "time":
		if c.Bool("entry-only") {
			return 0, fmt.Errorf("--weight time needs return probes to time calls: drop --entry-only")
		}
		return profile.Time, nil
	}
	return 0, fmt.Errorf("--weight %q: give calls or time", c.String("weight"))
}

// profileFile is an example file name for format.
func profileFile(format string) string {
	if format == "pprof" {
		return "calls.pb.gz"
	}
	return "calls.svg"
}
