// Package profile turns probe events' stacks into profiles: counts of calls
// and, when return probes time them, total time, by stack. It writes them
// as pprof protobuf (go tool pprof, speedscope, Pyroscope, Parca), as
// folded stacks (flamegraph.pl's input) and as a self-contained SVG flame
// graph.
package profile
