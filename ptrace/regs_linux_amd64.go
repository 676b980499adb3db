package ptrace

import (
	"github.com/utap/utap/internal/proc"
	"golang.org/x/sys/unix"
)

// setReg sets general register n, numbered as x86 encodes it (ssol's
// StepState.Scratch).
func setReg(r *unix.PtraceRegs, n int, v uint64) {
	p := [16]*uint64{&r.Rax, &r.Rcx, &r.Rdx, &r.Rbx, &r.Rsp, &r.Rbp, &r.Rsi, &r.Rdi,
		&r.R8, &r.R9, &r.R10, &r.R11, &r.R12, &r.R13, &r.R14, &r.R15}
	if n >= 0 && n < 16 {
		*p[n] = v
	}
}

// sigPending reports whether sig is pending on the thread itself
// (SigPnd of /proc/TID/status), as an int3's SIGTRAP is.
func sigPending(tid int, sig unix.Signal) bool {
	mask, err := proc.StatusMask(tid, "SigPnd")
	return err == nil && mask&(1<<(uint(sig)-1)) != 0
}
