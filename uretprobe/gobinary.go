package uretprobe

import (
	"debug/elf"
	"fmt"
)

// IsGo reports whether the ELF file at path was built by the Go toolchain:
// it has .go.buildinfo (go1.13+) or .gopclntab, which survives stripping
// because the runtime needs it for tracebacks.
func IsGo(path string) (bool, error) {
	f, err := elf.Open(path)
	if err != nil {
		return false, fmt.Errorf("checking whether %s is a Go binary: %w", path, err)
	}
	defer f.Close()
	return f.Section(".go.buildinfo") != nil || f.Section(".gopclntab") != nil, nil
}
