// Package output writes probe events for people (an ltrace-like text line
// per event) and for programs (JSON lines in the schema of docs/output.md).
package output
