//go:build !(linux && amd64)

package main

// utap traces Linux x86-64 processes (ptrace, kernel uprobes, x86-64
// instruction relocation): building it for another system or architecture
// stops here with this identifier's name as the reason.
var _ = utap_builds_for_linux_amd64_only
