//go:build linux && amd64

package ptrace

import "github.com/utap/utap/internal/proc"

// mapping is one line of /proc/PID/maps.
type mapping = proc.Mapping

var readMaps = proc.Maps

// object names an ELF file mapped in a process as the maps show it (the
// path the loader opened, and its inode): the key under which breakpoints
// and the loader watch remember objects. Whether a mapping is a given
// file is proc.FileMatcher's one rule.
type object struct {
	path  string
	inode uint64
}
