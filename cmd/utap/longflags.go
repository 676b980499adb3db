//go:build linux && amd64

package main

import (
	"slices"

	"github.com/urfave/cli/v2"
)

// strace's and ltrace's long options, as aliases of the flags they name
// (strace --output=FILE is -o FILE, ltrace --indent=2 is -n 2), and
// strace's qualifier options, --trace=SET and the like, which are its
// -e NAME=SET (straceQualifiers).
var longNames = map[string][]string{
	"o": {"output"}, "f": {"follow-forks"}, "ff": {"output-separately"}, "s": {"string-limit"},
	"T": {"syscall-times"}, "c": {"summary-only"}, "C": {"summary"}, "k": {"stack-traces"},
	"q": {"quiet"}, "n": {"indent"}, "l": {"library"}, "r": {"relative-timestamps"},
	"t": {"absolute-timestamps"}, "i": {"instruction-pointer"}, "a": {"columns", "align"},
	"u": {"user"}, "X": {"const-print-style"}, "P": {"trace-path"},
}

// withLongNames adds longNames to flags and the qualifier options.
func withLongNames(flags []cli.Flag) []cli.Flag {
	for _, f := range flags {
		more := longNames[f.Names()[0]]
		if len(more) == 0 || slices.Contains(f.Names(), more[0]) {
			continue // none, or a flag shared by run and attach, named already
		}
		switch f := f.(type) {
		case *cli.BoolFlag:
			f.Aliases = append(f.Aliases, more...)
		case *cli.StringFlag:
			f.Aliases = append(f.Aliases, more...)
		case *cli.IntFlag:
			f.Aliases = append(f.Aliases, more...)
		case *cli.StringSliceFlag:
			f.Aliases = append(f.Aliases, more...)
		}
	}
	for _, q := range straceQualifiers {
		flags = append(flags, &cli.StringSliceFlag{Name: q, Usage: "strace's --" + q + "=`SET`: -e " + q + "=SET"})
	}
	return flags
}

// straceQualifiers are strace's -e NAME=SET qualifiers that are long
// options too (--verbose is utap's -v).
var straceQualifiers = []string{"trace", "signal", "status", "raw", "abbrev", "read", "write"}

// qualifierTexts are the long qualifier options as -e texts.
func qualifierTexts(c *cli.Context) []string {
	var texts []string
	for _, q := range straceQualifiers {
		for _, v := range c.StringSlice(q) {
			texts = append(texts, q+"="+v)
		}
	}
	return texts
}
