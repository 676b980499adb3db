//go:build linux && amd64

package main

import (
	"slices"

	"github.com/utap/utap/probe"
	"github.com/utap/utap/uretprobe"
)

// withReturns adds a return probe beside every entry probe on a function
// start, so calls show their return value (and with -T and -c their
// duration), as in ltrace. calls maps each such entry probe's index to its
// twin's, for the text writer to show the pair as one line. A
// conditional entry probe gets no twin: its condition reads arguments, which
// a return probe no longer has, and timing every call would contradict it.
// untimed lists the conditional entry probes left without one, for the CLI
// to say so.
func withReturns(specs []*probe.Spec) (out []*probe.Spec, untimed []string, calls map[int]int) {
	calls = map[int]int{}
	has := map[[2]string]bool{}
	for _, s := range specs {
		if s.Kind == probe.Return && !s.Syscall {
			has[[2]string{s.Object, s.Symbol}] = true
		}
	}
	out = slices.Clone(specs)
	for i, s := range specs {
		if s.Syscall || s.Agg != nil { // an aggregation takes only its own kind of event
			continue
		}
		k := [2]string{s.Object, s.Symbol}
		if s.Kind == probe.Entry && s.Symbol != "" && s.Offset == 0 && s.Cond != nil && !has[k] {
			untimed = append(untimed, s.Text)
		}
		if s.Kind != probe.Entry || s.Symbol == "" || s.Offset != 0 || s.Cond != nil || has[k] || s.Provider != "" {
			continue
		}
		has[k] = true
		twin := &probe.Spec{Kind: probe.Return, Object: s.Object, Symbol: s.Symbol, Twinned: true, Optional: s.Optional}
		twin.Text = twin.String()
		// A copy: the caller's spec stays as parsed.
		e := *s
		e.Twinned = true
		out[i] = &e
		calls[i] = len(out)
		out = append(out, twin)
	}
	return out, untimed, calls
}

// unpaired says which functions' entries have no return twin after all:
// those whose return no probe survives, whose twins the resolver drops
// (resolver.twinsFollow).
var unpaired = uretprobe.Unpaired

// typedReturns moves the return value a return probe without fetches got
// from its prototype (probe.Site.Bind: a typed ret fetch, then any output
// arguments) from Args to Ret, in place of the raw register the engines
// put there, so that every writer and -c's error count see the typed
// value; the output arguments stay in Args.
func typedReturns(specs []*probe.Spec) retTyped {
	typed := make(retTyped, len(specs))
	for i, s := range specs {
		typed[i] = s.Kind == probe.Return && len(s.Fetches) == 0 && s.Provider == "" && !s.Syscall
	}
	return typed
}

// retTyped is, by probe index, whether a return probe's first value is
// its typed return value (typedReturns).
type retTyped []bool

func (t retTyped) is(i int) bool { return i >= 0 && i < len(t) && t[i] }

// event moves ev's typed return value to Ret.
func (t retTyped) event(ev *probe.Event) {
	if ev.Kind == "return" && t.is(ev.ProbeIndex) && len(ev.Args) >= 1 {
		// Ret points into the values, past the args left: no
		// allocation per event (nothing appends over it).
		ev.Ret = &ev.Args[0]
		ev.Args = ev.Args[1:]
	}
}

// call moves a call's typed return value to Ret, as event does.
func (t retTyped) call(c *probe.Call) {
	if t.is(c.Return) && len(c.Out) >= 1 {
		c.Ret = c.Out[0]
		c.Out = c.Out[1:]
	}
}

// kernelErrorsAgree says whether counting in the kernel (-c on the uprobe
// engine: a return value is an error when the 64-bit register is
// negative) counts the errors the typed values would: not for a 32-bit
// int (its -1 is 0xffffffff in rax) nor for a pointer (NULL counts).
func kernelErrorsAgree(sites []probe.Site) bool {
	for _, s := range sites {
		if s.Spec.Kind != probe.Return || len(s.Spec.Fetches) > 0 || len(s.Fetches) == 0 {
			continue
		}
		f := s.Fetches[0]
		t := f.Expr.Type()
		if f.Format == probe.FormatPointer || t.Signed && t.Size < 8 {
			return false
		}
	}
	return true
}
