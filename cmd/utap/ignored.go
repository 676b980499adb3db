//go:build linux && amd64

package main

import (
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// A command started under nohup, or with & from a script, has SIGHUP, or
// SIGINT and SIGQUIT, ignored, and must keep them ignored when traced, as
// under strace. Go's runtime installs its own handler for every signal
// but an ignored SIGHUP or SIGINT, and a child it starts gets the default
// action for those it handles: so utap ignores them itself, for the whole
// chain (supervisor, tracer, command), and never catches them.
//
// What utap can know: Go reports the two it respects (os/signal.Ignored).
// SIGQUIT's inherited disposition is lost by the time any Go code runs;
// it is taken as ignored with SIGINT, as a shell ignores both for a
// command run in the background without job control (POSIX's rule for
// asynchronous lists), and only then.
const ignoredEnv = "UTAP_IGNORED"

// startIgnored are the signals ignored when the user started utap. Read
// before any signal.Notify (which would install handlers for them), and
// passed to the tracer in the environment, taken out again there.
var startIgnored = func() []syscall.Signal {
	var out []syscall.Signal
	if v, ok := os.LookupEnv(ignoredEnv); ok {
		os.Unsetenv(ignoredEnv)
		for _, f := range strings.Split(v, ",") {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, syscall.Signal(n))
			}
		}
	} else {
		if signal.Ignored(syscall.SIGHUP) {
			out = append(out, syscall.SIGHUP)
		}
		if signal.Ignored(syscall.SIGINT) {
			out = append(out, syscall.SIGINT, syscall.SIGQUIT)
		}
	}
	for _, s := range out {
		signal.Ignore(s) // not handled by Go: a child keeps it ignored
	}
	return out
}()

// ignoredEnviron is the tracer's environment entry for startIgnored.
func ignoredEnviron() string {
	f := make([]string, len(startIgnored))
	for i, s := range startIgnored {
		f[i] = strconv.Itoa(int(s))
	}
	return ignoredEnv + "=" + strings.Join(f, ",")
}

// caught is endSignals less those the user had ignored: they stay so.
func caught() []os.Signal {
	return slices.DeleteFunc(slices.Clone(endSignals), func(s os.Signal) bool {
		return slices.Contains(startIgnored, s.(syscall.Signal))
	})
}
