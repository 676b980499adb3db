//go:build linux && amd64

package compare

import (
	"fmt"
	"strconv"
)

// Workload is the program every tool traces: it calls Target Calls times
// over Threads threads (mode "call"), or makes the getppid system call that
// many times (mode "syscall"), then prints a checksum.
type Workload struct {
	Name string // shown in the report: what ran and why
	Exe  string // path of the program

	// Args are the program's arguments for one run.
	Args func(calls string, threads int, mode string) []string

	Target string // symbol of the probed function, long target(long a, long b)
	// Idle are symbols of functions the workload never calls, for the rows
	// that install many probes but hit one.
	Idle []string
	// Regs name the registers holding Target's first two arguments at entry
	// (bpftrace's reg() names; gdb prefixes a $), and its return value.
	Regs [2]string
	Ret  string
	// Static is set for a program without .dynsym, which ltrace cannot trace.
	Static bool
	// Libc is set when the syscall mode goes through libc's getppid.
	Libc bool
	// USDT is set when the usdt mode fires the static probe utap:tick
	// (STAP_PROBE2, with the call's two arguments) instead of the call.
	USDT bool

	// User marks the user's own command: no checksum to check, no Target;
	// Single when its command line has no {N}, so it runs at one count only.
	User, Single bool
}

// Workload modes.
const (
	ModeCall    = "call"
	ModeSyscall = "syscall"
	// ModeSyscallMix makes, beside each getppid, MixUntraced getuid
	// calls that no probe selects: what a filter saves.
	ModeSyscallMix = "syscallmix"
	// ModeSyscallOther makes only getuid calls, none of the getppid the
	// probe selects: the cost of an untraced system call under a tracer.
	ModeSyscallOther = "syscallother"
	ModeUSDT         = "usdt"
	// ModeWait waits for a line on standard input, then calls every
	// function once: the attach rows' target (C workload only).
	ModeWait = "wait"
)

// MixUntraced is how many untraced system calls ModeSyscallMix makes per
// traced one.
const MixUntraced = 100

// IsSyscall reports whether a workload mode traces getppid.
func IsSyscall(mode string) bool {
	return mode == ModeSyscall || mode == ModeSyscallMix || mode == ModeSyscallOther
}

// TargetB is the second argument of every call of the target: conditions on
// it are always true (== TargetB) or always false (!= TargetB).
const TargetB = 7

// GoWorkload is utap's own hidden workload mode, `utap __workload`, which
// needs no compiler. exe is the utap binary.
func GoWorkload(exe string) *Workload {
	return &Workload{
		Name: "Go: utap __workload (no C compiler needed; static Go binary)",
		Exe:  exe,
		Args: func(calls string, threads int, mode string) []string {
			return []string{"__workload", "--calls", calls, "--threads", strconv.Itoa(threads), "--mode", mode}
		},
		Target: "main.utapWorkloadTarget",
		Regs:   [2]string{"ax", "bx"},
		Ret:    "ax",
		Static: true,
	}
}

// Checksum is what a workload prints for calls in mode "call": the sum of
// target(i, TargetB) = 2*i + TargetB over i < calls, whatever the threads.
func Checksum(calls int) int64 {
	n := int64(calls)
	return n*(n-1) + TargetB*n
}

// argv is the workload's command line; calls is a number or a placeholder.
func (w *Workload) argv(calls string, threads int, mode string) []string {
	return append([]string{w.Exe}, w.Args(calls, threads, mode)...)
}

func (w *Workload) String() string { return fmt.Sprintf("%s (%s)", w.Name, w.Exe) }
