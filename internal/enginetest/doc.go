// Package enginetest holds the tests every engine must pass: one table of
// behaviours run on the ptrace and the uprobe engine through the real
// pipeline (probe.Parse, elfsym.Resolve, Engine.Trace), the parity test
// that requires both engines to emit the same events, and the CLI checks
// run against the built utap binary on both backends.
//
// The package has no code of its own; it exists for its tests.
package enginetest
