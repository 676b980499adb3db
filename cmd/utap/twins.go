//go:build linux && amd64

package main

import "github.com/utap/utap/probe"

// withReturns adds, for -T and -c, a return probe beside every entry probe
// on a function start, so calls get durations as in ltrace -T / -c. A
// conditional entry probe gets no twin: its condition reads arguments, which
// a return probe no longer has, and timing every call would contradict it.
// untimed lists the conditional entry probes left without one, for the CLI
// to say so.
func withReturns(specs []*probe.Spec) (out []*probe.Spec, untimed []string) {
	has := map[[2]string]bool{}
	for _, s := range specs {
		if s.Kind == probe.Return {
			has[[2]string{s.Object, s.Symbol}] = true
		}
	}
	out = specs
	for _, s := range specs {
		k := [2]string{s.Object, s.Symbol}
		if s.Kind == probe.Entry && s.Symbol != "" && s.Offset == 0 && s.Cond != nil && !has[k] {
			untimed = append(untimed, s.Text)
		}
		if s.Kind != probe.Entry || s.Symbol == "" || s.Offset != 0 || s.Cond != nil || has[k] || s.Provider != "" {
			continue
		}
		has[k] = true
		twin := &probe.Spec{Kind: probe.Return, Object: s.Object, Symbol: s.Symbol}
		twin.Text = twin.String()
		out = append(out, twin)
	}
	return out, untimed
}
