// Package compare measures what one traced event costs a whole process, for
// utap's two engines and for the classic tracers found on PATH (ltrace,
// gdb, strace, bpftrace, perf), in the manner of the uprobes paper's
// overhead table, on the user's own machine.
//
// Every tool traces the same workload, a program that calls one non-inlined
// function a known number of times on T threads. Each row runs the tool at
// two call counts; the difference of the wall-clock times divided by the
// difference of the counts is the per-event cost with start-up cancelled,
// and the untraced workload's own slope is subtracted. Repetitions are
// interleaved so drift in the machine spreads over every row alike. A tool
// that loses or invents events is flagged and left out of the ranking.
package compare
