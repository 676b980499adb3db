// Package summary is the -c report: per function, how many calls, errors
// and how long they took (total, average, min, max, p50, p99), like
// strace -c and ltrace -c, as an aligned text table or one JSON object.
//
// Memory stays bounded however long the trace runs: durations go into a
// streaming log-linear Histogram, never kept one by one.
package summary
