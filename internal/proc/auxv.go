//go:build linux && amd64

package proc

import (
	"encoding/binary"
	"fmt"
	"os"
)

// Entry reads AT_ENTRY, the program's entry point (runtime address), from
// /proc/PID/auxv: code that runs once, at start-up, which the ptrace engine
// borrows for injected system calls, and where a process without a loader
// is held for its probes.
func Entry(pid int) (uint64, error) { return Auxv(pid, AtEntry) }

// Auxv reads one entry of /proc/PID/auxv.
func Auxv(pid int, key uint64) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/auxv", pid))
	if err != nil {
		return 0, Error(pid, "auxv", err)
	}
	for i := 0; i+16 <= len(b); i += 16 {
		if binary.LittleEndian.Uint64(b[i:]) == key {
			return binary.LittleEndian.Uint64(b[i+8:]), nil
		}
	}
	return 0, fmt.Errorf("pid %d: no auxv entry %d", pid, key)
}

// Keys of auxv entries, from <elf.h>.
const (
	AtEntry  = 9  // the program's entry point
	AtExecfn = 31 // the file name execve was given, a string on the new stack
)
