package proc

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// Raw ptrace requests: x/sys/unix has no SEIZE-with-options, LISTEN,
// GETSIGINFO/SETSIGINFO or DETACH-with-signal. The requests never block,
// so RawSyscall saves the scheduler hand-off on the hot path.
func request(req int, tid int, addr, data uintptr) error {
	_, _, e := unix.RawSyscall6(unix.SYS_PTRACE, uintptr(req), uintptr(tid), addr, data, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// requestPtr is request with data pointing into our memory. The pointer
// stays one until the system call: a uintptr made earlier would go stale
// if the goroutine's stack moved meanwhile (a struct on the stack of a
// deep caller: registers read into, or written from, the old copy).
func requestPtr(req int, tid int, addr uintptr, data unsafe.Pointer) error {
	_, _, e := unix.RawSyscall6(unix.SYS_PTRACE, uintptr(req), uintptr(tid), addr, uintptr(data), 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// SeizeOptions are the events a seized tracee reports: clone, fork,
// vfork (and its end), exec and exit.
const SeizeOptions = unix.PTRACE_O_TRACECLONE | unix.PTRACE_O_TRACEFORK | unix.PTRACE_O_TRACEVFORK |
	unix.PTRACE_O_TRACEVFORKDONE | unix.PTRACE_O_TRACEEXEC | unix.PTRACE_O_TRACEEXIT

// Seize attaches to tid with opts (PTRACE_SEIZE), without stopping it.
func Seize(tid int, opts int) error {
	return request(unix.PTRACE_SEIZE, tid, 0, uintptr(opts))
}

// Interrupt stops a seized thread (PTRACE_INTERRUPT).
func Interrupt(tid int) error { return request(unix.PTRACE_INTERRUPT, tid, 0, 0) }

// Listen resumes a thread in group-stop without ending it (PTRACE_LISTEN).
func Listen(tid int) error { return request(unix.PTRACE_LISTEN, tid, 0, 0) }

// Cont resumes tid, delivering sig (0: none).
func Cont(tid int, sig int) error { return request(unix.PTRACE_CONT, tid, 0, uintptr(sig)) }

// Step resumes tid for one instruction (PTRACE_SINGLESTEP), delivering
// sig (0: none).
func Step(tid int, sig int) error { return request(unix.PTRACE_SINGLESTEP, tid, 0, uintptr(sig)) }

// Detach lets tid go, delivering sig (0: none).
func Detach(tid int, sig int) error { return request(unix.PTRACE_DETACH, tid, 0, uintptr(sig)) }

// GetRegs reads tid's general registers.
func GetRegs(tid int, r *unix.PtraceRegs) error {
	return requestPtr(unix.PTRACE_GETREGS, tid, 0, unsafe.Pointer(r))
}

// SetRegs writes tid's general registers.
func SetRegs(tid int, r *unix.PtraceRegs) error {
	return requestPtr(unix.PTRACE_SETREGS, tid, 0, unsafe.Pointer(r))
}

// EventMsg reads the PTRACE_EVENT stop's message (a new tid or pid, an
// exit status, the old tid of an exec).
func EventMsg(tid int) (uint64, error) {
	var m uint64
	err := requestPtr(unix.PTRACE_GETEVENTMSG, tid, 0, unsafe.Pointer(&m))
	return m, err
}

// Siginfo is the kernel's 128-byte siginfo_t; the fields we use are the
// header and, at byte 16, si_addr (faults) or si_pid (kill, tgkill).
type Siginfo struct {
	Signo int32
	Errno int32
	Code  int32
	_     int32
	Addr  uint64 // also si_pid (low 32 bits) for SI_USER / SI_TKILL
	_     [104]byte
}

const (
	SIKernel = 0x80 // SI_KERNEL: an int3 (or another kernel-sent signal)
	SIUser   = 0    // SI_USER: kill()
	SITkill  = -6   // SI_TKILL: tgkill()
)

// Pid is the sender of a kill() or tgkill() signal.
func (si *Siginfo) Pid() int { return int(int32(uint32(si.Addr))) }

// GetSiginfo reads the siginfo of tid's signal-delivery stop.
func GetSiginfo(tid int, si *Siginfo) error {
	return requestPtr(unix.PTRACE_GETSIGINFO, tid, 0, unsafe.Pointer(si))
}

// SetSiginfo replaces it.
func SetSiginfo(tid int, si *Siginfo) error {
	return requestPtr(unix.PTRACE_SETSIGINFO, tid, 0, unsafe.Pointer(si))
}

// WaitFlags waits for every tracee of this thread (clone children
// included) and nothing of other threads: a Go program may run other
// children (exec.Command) whose status is not ours to reap.
const WaitFlags = unix.WALL | unix.WNOTHREAD

// Wait waits for a stop or exit of pid (-1: any tracee of this thread),
// retrying on EINTR.
func Wait(pid int, flags int) (int, unix.WaitStatus, error) {
	var ws unix.WaitStatus
	for {
		wpid, err := unix.Wait4(pid, &ws, WaitFlags|flags, nil)
		if err == unix.EINTR {
			continue
		}
		return wpid, ws, err
	}
}

// Event is the PTRACE_EVENT_* of a stop (status>>16); WaitStatus.TrapCause
// only reads it when the stop signal is SIGTRAP.
func Event(ws unix.WaitStatus) int { return int(uint32(ws) >> 16) }

// WaitNoHang is wait4(-1, WNOHANG) as a raw syscall: it never blocks, so
// the runtime's syscall hand-off would be pure cost. tid 0: nothing yet.
func WaitNoHang() (int, unix.WaitStatus, error) {
	var ws unix.WaitStatus
	r, _, e := unix.RawSyscall6(unix.SYS_WAIT4, ^uintptr(0), uintptr(unsafe.Pointer(&ws)),
		WaitFlags|unix.WNOHANG, 0, 0, 0)
	if e != 0 {
		if e == unix.EINTR {
			return 0, 0, nil
		}
		return 0, 0, e
	}
	return int(r), ws, nil
}

// GetSigmask reads the blocked-signal mask of stopped tid
// (PTRACE_GETSIGMASK; bit n-1 is signal n).
func GetSigmask(tid int) (uint64, error) {
	var m uint64
	err := requestPtr(unix.PTRACE_GETSIGMASK, tid, 8, unsafe.Pointer(&m))
	return m, err
}

// SetSigmask replaces it (PTRACE_SETSIGMASK).
func SetSigmask(tid int, m uint64) error {
	return requestPtr(unix.PTRACE_SETSIGMASK, tid, 8, unsafe.Pointer(&m))
}

// debugRegOff is offsetof(struct user, u_debugreg) on x86_64.
const debugRegOff = 848

// SetDebugReg writes tid's debug register i (0-3 addresses, 6 status, 7
// control), by PTRACE_POKEUSER.
func SetDebugReg(tid, i int, v uint64) error {
	return request(unix.PTRACE_POKEUSR, tid, uintptr(debugRegOff+8*i), uintptr(v))
}

// Rseq is a thread's rseq(2) registration (struct
// ptrace_rseq_configuration).
type Rseq struct {
	Addr       uint64 // its struct rseq, 0: none
	Size, Sig  uint32
	Flags, pad uint32
}

// GetRseq reads stopped tid's rseq registration
// (PTRACE_GET_RSEQ_CONFIGURATION, Linux 5.13).
func GetRseq(tid int) (Rseq, error) {
	var c Rseq
	err := requestPtr(unix.PTRACE_GET_RSEQ_CONFIGURATION, tid, unsafe.Sizeof(c), unsafe.Pointer(&c))
	return c, err
}
