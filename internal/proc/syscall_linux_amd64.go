package proc

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// SyscallOptions are the options a trace of system calls adds to
// SeizeOptions: syscall-stops marked SIGTRAP|0x80 (told from a real
// SIGTRAP), and the stops of a seccomp filter's SECCOMP_RET_TRACE.
const SyscallOptions = unix.PTRACE_O_TRACESYSGOOD | unix.PTRACE_O_TRACESECCOMP

// SyscallStopSig is the stop signal of a syscall-stop under TRACESYSGOOD.
const SyscallStopSig = int(unix.SIGTRAP) | 0x80

// SyscallInfo is the kernel's struct ptrace_syscall_info.
type SyscallInfo struct {
	Op    uint8 // PTRACE_SYSCALL_INFO_{NONE,ENTRY,EXIT,SECCOMP}
	_     uint8
	_     uint16
	Arch  uint32
	IP    uint64
	SP    uint64
	NrRet uint64    // entry, seccomp: the number; exit: the return value
	Args  [6]uint64 // entry, seccomp; exit: Args[0]'s low byte is is_error
	_     uint32    // seccomp's ret_data
	_     uint32
}

// Nr is the call's number at an entry or seccomp stop.
func (s *SyscallInfo) Nr() int { return int(s.NrRet) }

// Ret is the value returned at an exit stop (a negative errno on error).
func (s *SyscallInfo) Ret() int64 { return int64(s.NrRet) }

// GetSyscallInfo reads the syscall-stop tid is in (PTRACE_GET_SYSCALL_INFO).
func GetSyscallInfo(tid int, si *SyscallInfo) error {
	return requestPtr(unix.PTRACE_GET_SYSCALL_INFO, tid, unsafe.Sizeof(*si), unsafe.Pointer(si))
}

// ContSyscall resumes tid to its next system call entry or exit
// (PTRACE_SYSCALL), delivering sig (0: none).
func ContSyscall(tid int, sig int) error {
	return request(unix.PTRACE_SYSCALL, tid, 0, uintptr(sig))
}

// SetOptions replaces tid's ptrace options (PTRACE_SETOPTIONS).
func SetOptions(tid int, opts int) error {
	return request(unix.PTRACE_SETOPTIONS, tid, 0, uintptr(opts))
}
