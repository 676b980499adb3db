package ptrace

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// Raw ptrace requests: x/sys/unix has no SEIZE-with-options, LISTEN,
// GETSIGINFO/SETSIGINFO or DETACH-with-signal. The requests never block,
// so RawSyscall saves the scheduler hand-off on the hot path.
func ptrace(req int, tid int, addr, data uintptr) error {
	_, _, e := unix.RawSyscall6(unix.SYS_PTRACE, uintptr(req), uintptr(tid), addr, data, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

const seizeOptions = unix.PTRACE_O_TRACECLONE | unix.PTRACE_O_TRACEFORK | unix.PTRACE_O_TRACEVFORK |
	unix.PTRACE_O_TRACEVFORKDONE | unix.PTRACE_O_TRACEEXEC | unix.PTRACE_O_TRACEEXIT

func seize(tid int, opts int) error {
	return ptrace(unix.PTRACE_SEIZE, tid, 0, uintptr(opts))
}

func interrupt(tid int) error { return ptrace(unix.PTRACE_INTERRUPT, tid, 0, 0) }
func listen(tid int) error    { return ptrace(unix.PTRACE_LISTEN, tid, 0, 0) }

func cont(tid int, sig int) error { return ptrace(unix.PTRACE_CONT, tid, 0, uintptr(sig)) }

func detach(tid int, sig int) error { return ptrace(unix.PTRACE_DETACH, tid, 0, uintptr(sig)) }

func getRegs(tid int, r *unix.PtraceRegs) error {
	return ptrace(unix.PTRACE_GETREGS, tid, 0, uintptr(unsafe.Pointer(r)))
}

func setRegs(tid int, r *unix.PtraceRegs) error {
	return ptrace(unix.PTRACE_SETREGS, tid, 0, uintptr(unsafe.Pointer(r)))
}

func eventMsg(tid int) (uint64, error) {
	var m uint64
	err := ptrace(unix.PTRACE_GETEVENTMSG, tid, 0, uintptr(unsafe.Pointer(&m)))
	return m, err
}

// siginfo is the kernel's 128-byte siginfo_t; the fields we use are the
// header and, at byte 16, si_addr (faults) or si_pid (kill, tgkill).
type siginfo struct {
	Signo int32
	Errno int32
	Code  int32
	_     int32
	Addr  uint64 // also si_pid (low 32 bits) for SI_USER / SI_TKILL
	_     [104]byte
}

const (
	siKernel = 0x80 // SI_KERNEL: an int3 (or another kernel-sent signal)
	siUser   = 0    // SI_USER: kill()
	siTkill  = -6   // SI_TKILL: tgkill()
)

func (si *siginfo) pid() int { return int(int32(uint32(si.Addr))) }

func getSiginfo(tid int, si *siginfo) error {
	return ptrace(unix.PTRACE_GETSIGINFO, tid, 0, uintptr(unsafe.Pointer(si)))
}

func setSiginfo(tid int, si *siginfo) error {
	return ptrace(unix.PTRACE_SETSIGINFO, tid, 0, uintptr(unsafe.Pointer(si)))
}

// waitFlags waits for every tracee of this thread (clone children
// included) and nothing of other threads: a Go program may run other
// children (exec.Command) whose status is not ours to reap.
const waitFlags = unix.WALL | unix.WNOTHREAD

func wait(pid int, flags int) (int, unix.WaitStatus, error) {
	var ws unix.WaitStatus
	for {
		wpid, err := unix.Wait4(pid, &ws, waitFlags|flags, nil)
		if err == unix.EINTR {
			continue
		}
		return wpid, ws, err
	}
}

// event is the PTRACE_EVENT_* of a stop (status>>16); WaitStatus.TrapCause
// only reads it when the stop signal is SIGTRAP.
func event(ws unix.WaitStatus) int { return int(uint32(ws) >> 16) }
