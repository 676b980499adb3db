//go:build linux && amd64

package main

import (
	"fmt"
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
	}
	if strings.Contains(msg, "-duration") {
		msg += " (a duration with its unit: 10s, 500ms, 2m)"
	}
	return fmt.Errorf("%s%s (see '%s --help')", prefix, msg, where)
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
