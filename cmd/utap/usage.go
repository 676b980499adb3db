//go:build linux && amd64

package main

import (
	"fmt"
	"os"
	"runtime/debug"
	"strings"

	"github.com/urfave/cli/v2"
)

// usageError turns a flag the command line got wrong into one line saying
// what and where to look, instead of the whole help.
func usageError(c *cli.Context, err error, _ bool) error {
	where, prefix := "utap", ""
	if c.Command != nil && c.Command.Name != "" && c.Command.Name != c.App.Name {
		where, prefix = "utap "+c.Command.Name, c.Command.Name+": "
	}
	msg := strings.TrimPrefix(err.Error(), "flag provided but not defined: ")
	if msg != err.Error() {
		msg = "unknown flag " + msg
		if s := suggestFlag(c, strings.TrimLeft(strings.TrimPrefix(err.Error(), "flag provided but not defined: "), "-")); s != "" {
			msg += "; did you mean " + s + "?"
		}
	}
	if strings.Contains(msg, "-duration") {
		msg += " (a duration with its unit: 10s, 500ms, 2m)"
	}
	return fmt.Errorf("%s%s (see '%s --help')", prefix, msg, where)
}

// suggestFlag is the command's flag closest to name, spelled as typed
// (-x or --name), or "".
func suggestFlag(c *cli.Context, name string) string {
	var flags []cli.Flag
	if c.Command != nil && c.Command.Name != "" {
		flags = c.Command.Flags
	} else {
		flags = c.App.Flags
	}
	best, bestD := "", 3 // at most two edits away
	for _, f := range flags {
		for _, n := range f.Names() {
			if d := editDistance(name, n); d < bestD || (d == bestD && len(n) > 1 && len(best) <= 2) {
				best, bestD = n, d
			}
		}
	}
	if best == "" {
		return ""
	}
	if len(best) == 1 {
		return "-" + best
	}
	return "--" + best
}

// commandNotFound says which command was meant, in one line.
func commandNotFound(c *cli.Context, name string) {
	msg := fmt.Sprintf("utap: unknown command %q", name)
	best, bestD := "", 3
	for _, cmd := range c.App.Commands {
		if d := editDistance(name, cmd.Name); d < bestD {
			best, bestD = cmd.Name, d
		}
	}
	if best != "" {
		msg += fmt.Sprintf("; did you mean %q?", best)
	}
	fmt.Fprintf(os.Stderr, "%s (commands: list, run, attach, compare; see 'utap --help')\n", msg)
	os.Exit(2)
}

// editDistance is the Damerau-Levenshtein distance (adjacent swaps count
// one edit: "rnu" is one from "run").
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// straceSpelled are strace's and ltrace's multi-letter flags with one dash
// (-tt, -ttt): help shows them as users type them, not as --tt.
var straceSpelled = []string{"tt", "ttt"}

func init() {
	std := cli.FlagStringer
	cli.FlagStringer = func(f cli.Flag) string {
		out := std(f)
		for _, n := range straceSpelled {
			if strings.HasPrefix(out, "--"+n+" ") || strings.HasPrefix(out, "--"+n+"\t") {
				return out[1:]
			}
		}
		return out
	}
}

// withUsageErrors gives every command the one-line usage errors.
func withUsageErrors(cmds []*cli.Command) []*cli.Command {
	for _, c := range cmds {
		c.OnUsageError = usageError
	}
	return cmds
}

// version is the module's version and the commit it was built from, as the
// Go toolchain recorded them.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	v := bi.Main.Version
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v += " " + s.Value[:min(len(s.Value), 12)]
		case "vcs.modified":
			if s.Value == "true" {
				v += "+dirty"
			}
		}
	}
	return v
}
