//go:build linux && amd64

package proc

import (
	"encoding/binary"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
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

// ExecStack returns, for a process held at its exec (before its first
// instruction, tid its only thread, stopped), its stack pointer and the
// address of the file name execve was given (AT_EXECFN): where the
// kernel left execve's arguments for the new image.
func ExecStack(tid, pid int) (sp, execfn uint64, err error) {
	var regs unix.PtraceRegs
	if err := GetRegs(tid, &regs); err != nil {
		return 0, 0, err
	}
	execfn, err = Auxv(pid, AtExecfn)
	return regs.Rsp, execfn, err
}

// StartStack reads where the kernel left the new image's stack at exec
// (/proc/PID/stat's startstack): its argc, then argv and envp, as at the
// first instruction. Needs no stop: a process already running can be
// asked, its arguments there unless it rewrote them.
func StartStack(pid int) (sp, execfn uint64, err error) {
	// State is field 3, startstack field 28.
	f, err := StatFields(pid, 26)
	if err != nil {
		return 0, 0, Error(pid, "stat", err)
	}
	if sp, err = strconv.ParseUint(f[25], 10, 64); err != nil || sp == 0 {
		return 0, 0, fmt.Errorf("pid %d: no start stack", pid)
	}
	execfn, err = Auxv(pid, AtExecfn)
	return sp, execfn, err
}
