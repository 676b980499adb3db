//go:build linux && amd64

package syscalls

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// sigRTMin is the kernel's SIGRTMIN; strace names 32 SIGRTMIN and
// 33.. SIGRT_1...
const sigRTMin = 32

// signalName is strace's signame: SIGINT, SIGRTMIN, SIGRT_3, or the number.
func signalName(n int) string {
	switch {
	case n == sigRTMin:
		return "SIGRTMIN"
	case n > sigRTMin && n <= 64:
		return "SIGRT_" + strconv.Itoa(n-sigRTMin)
	case n > 0 && n < sigRTMin:
		if s := unix.SignalName(unix.Signal(n)); s != "" {
			return s
		}
	}
	return strconv.Itoa(n)
}

// sigsetStr is strace's sprintsigmask: [INT TERM], or ~[...] listing
// the absent signals when that is shorter (2/3 or more present).
func sigsetStr(mask uint64) string {
	var b strings.Builder
	if bits.OnesCount64(mask) >= 64*2/3 {
		b.WriteByte('~')
		mask = ^mask
	}
	b.WriteByte('[')
	first := true
	for i := 0; i < 64; i++ {
		if mask&(1<<i) == 0 {
			continue
		}
		if !first {
			b.WriteByte(' ')
		}
		first = false
		b.WriteString(strings.TrimPrefix(signalName(i+1), "SIG"))
	}
	b.WriteByte(']')
	return b.String()
}

var siCodes = xlat{
	{0, "SI_USER"}, {0x80, "SI_KERNEL"}, {^uint64(0), "SI_QUEUE"}, {^uint64(1), "SI_TIMER"},
	{^uint64(2), "SI_MESGQ"}, {^uint64(3), "SI_ASYNCIO"}, {^uint64(4), "SI_SIGIO"},
	{^uint64(5), "SI_TKILL"}, {^uint64(6), "SI_DETHREAD"}, {^uint64(59), "SI_ASYNCNL"},
}

// Per-signal si_code names (codes > 0).
var (
	cldCodes  = []string{"", "CLD_EXITED", "CLD_KILLED", "CLD_DUMPED", "CLD_TRAPPED", "CLD_STOPPED", "CLD_CONTINUED"}
	segvCodes = []string{"", "SEGV_MAPERR", "SEGV_ACCERR", "SEGV_BNDERR", "SEGV_PKUERR", "SEGV_ACCADI", "SEGV_ADIDERR", "SEGV_ADIPERR", "SEGV_MTEAERR", "SEGV_MTESERR"}
	busCodes  = []string{"", "BUS_ADRALN", "BUS_ADRERR", "BUS_OBJERR", "BUS_MCEERR_AR", "BUS_MCEERR_AO"}
	fpeCodes  = []string{"", "FPE_INTDIV", "FPE_INTOVF", "FPE_FLTDIV", "FPE_FLTOVF", "FPE_FLTUND", "FPE_FLTRES", "FPE_FLTINV", "FPE_FLTSUB", "FPE_FLTUNK", "FPE_CONDTRAP"}
	illCodes  = []string{"", "ILL_ILLOPC", "ILL_ILLOPN", "ILL_ILLADR", "ILL_ILLTRP", "ILL_PRVOPC", "ILL_PRVREG", "ILL_COPROC", "ILL_BADSTK", "ILL_BADIADDR"}
	trapCodes = []string{"", "TRAP_BRKPT", "TRAP_TRACE", "TRAP_BRANCH", "TRAP_HWBKPT", "TRAP_UNK"}
	pollCodes = []string{"", "POLL_IN", "POLL_OUT", "POLL_MSG", "POLL_ERR", "POLL_PRI", "POLL_HUP"}
)

// Signal formats a raw siginfo_t as strace's "--- SIG... {...} ---".
func Signal(si []byte) string {
	if len(si) < 32 {
		return "--- ? ---"
	}
	return "--- " + signalName(int(int32(binary.LittleEndian.Uint32(si)))) + " " + siginfoStr(si) + " ---"
}

// clockT is strace's print_clock_t: ticks, and in seconds when not 0
// (USER_HZ is 100 on x86_64).
func clockT(v uint64) string {
	s := strconv.FormatUint(v, 10)
	if v > 0 {
		s += fmt.Sprintf(" /* %d.%02d s */", v/100, v%100)
	}
	return s
}

// siginfoStr is strace's printsiginfo of a raw siginfo_t (at least 32
// bytes; 48 for SIGCHLD's times): {si_signo=SIGCHLD, ...}, {} when empty.
func siginfoStr(si []byte) string {
	le := binary.LittleEndian
	signo := int(int32(le.Uint32(si[0:])))
	if signo == 0 {
		return "{}"
	}
	errno := int32(le.Uint32(si[4:]))
	code := int32(le.Uint32(si[8:]))
	name := signalName(signo)
	var b strings.Builder
	fmt.Fprintf(&b, "{si_signo=%s, si_code=%s", name, siCodeStr(signo, code))
	if errno != 0 {
		fmt.Fprintf(&b, ", si_errno=%s", errnoLabel(int(errno)))
	}
	pid, uid := int32(le.Uint32(si[16:])), le.Uint32(si[20:])
	switch {
	case code <= 0: // sent by a process: kill, tkill, sigqueue, timers
		if code == -2 { // SI_TIMER
			fmt.Fprintf(&b, ", si_timerid=%#x, si_overrun=%d", le.Uint32(si[16:]), int32(le.Uint32(si[20:])))
			fmt.Fprintf(&b, ", si_int=%d, si_ptr=%s", int32(le.Uint32(si[24:])), ptr(le.Uint64(si[24:])))
			break
		}
		fmt.Fprintf(&b, ", si_pid=%d, si_uid=%d", pid, uid)
		if code == -1 || code == -3 { // SI_QUEUE, SI_MESGQ carry a value
			fmt.Fprintf(&b, ", si_int=%d, si_ptr=%s", int32(le.Uint32(si[24:])), ptr(le.Uint64(si[24:])))
		}
	case code == 0x80: // SI_KERNEL
		if signo == int(unix.SIGSEGV) || signo == int(unix.SIGBUS) {
			fmt.Fprintf(&b, ", si_addr=%s", ptr(le.Uint64(si[16:])))
		}
	case signo == int(unix.SIGCHLD):
		status := int32(le.Uint32(si[24:]))
		st := strconv.Itoa(int(status))
		if code == 2 || code == 3 { // killed, dumped: a signal
			st = signalName(int(status))
		}
		fmt.Fprintf(&b, ", si_pid=%d, si_uid=%d, si_status=%s", pid, uid, st)
		if len(si) >= 48 {
			fmt.Fprintf(&b, ", si_utime=%s, si_stime=%s", clockT(le.Uint64(si[32:])), clockT(le.Uint64(si[40:])))
		}
	case signo == int(unix.SIGSEGV), signo == int(unix.SIGBUS), signo == int(unix.SIGILL),
		signo == int(unix.SIGFPE), signo == int(unix.SIGTRAP):
		fmt.Fprintf(&b, ", si_addr=%s", ptr(le.Uint64(si[16:])))
	case signo == int(unix.SIGIO) || signo == int(unix.SIGPOLL):
		fmt.Fprintf(&b, ", si_band=%d, si_fd=%d", int64(le.Uint64(si[16:])), int32(le.Uint32(si[24:])))
	case signo == int(unix.SIGSYS):
		fmt.Fprintf(&b, ", si_call_addr=%s, si_syscall=%d, si_arch=AUDIT_ARCH_X86_64",
			ptr(le.Uint64(si[16:])), int32(le.Uint32(si[24:])))
	default:
		fmt.Fprintf(&b, ", si_pid=%d, si_uid=%d", pid, uid)
	}
	b.WriteString("}")
	return b.String()
}

func siCodeStr(signo int, code int32) string {
	if code <= 0 || code == 0x80 {
		if s, ok := siCodes.name(uint64(int64(code))); ok {
			return s
		}
		return strconv.Itoa(int(code))
	}
	var names []string
	switch unix.Signal(signo) {
	case unix.SIGCHLD:
		names = cldCodes
	case unix.SIGSEGV:
		names = segvCodes
	case unix.SIGBUS:
		names = busCodes
	case unix.SIGFPE:
		names = fpeCodes
	case unix.SIGILL:
		names = illCodes
	case unix.SIGTRAP:
		names = trapCodes
	case unix.SIGIO:
		names = pollCodes
	case unix.SIGSYS:
		if code == 1 {
			return "SYS_SECCOMP"
		}
	}
	if int(code) < len(names) {
		return names[code]
	}
	return strconv.Itoa(int(code))
}

// Exit formats how a process ended: "+++ exited with 0 +++",
// "+++ killed by SIGKILL +++", "+++ killed by SIGSEGV (core dumped) +++".
func Exit(status unix.WaitStatus) string {
	switch {
	case status.Exited():
		return fmt.Sprintf("+++ exited with %d +++", status.ExitStatus())
	case status.Signaled():
		core := ""
		if status.CoreDump() {
			core = " (core dumped)"
		}
		return fmt.Sprintf("+++ killed by %s%s +++", signalName(int(status.Signal())), core)
	}
	return "+++ ? +++"
}

// waitStatusStr is strace's printstatus: [{WIFEXITED(s) && WEXITSTATUS(s) == 0}].
func waitStatusStr(st uint32) string {
	ws := unix.WaitStatus(st)
	var s string
	switch {
	case ws.Exited():
		s = fmt.Sprintf("{WIFEXITED(s) && WEXITSTATUS(s) == %d}", ws.ExitStatus())
	case ws.Signaled():
		s = fmt.Sprintf("{WIFSIGNALED(s) && WTERMSIG(s) == %s", signalName(int(ws.Signal())))
		if ws.CoreDump() {
			s += " && WCOREDUMP(s)"
		}
		s += "}"
	case ws.Stopped():
		s = fmt.Sprintf("{WIFSTOPPED(s) && WSTOPSIG(s) == %s}", signalName(int(ws.StopSignal())))
		if ev := st >> 16; ev != 0 {
			s = s[:len(s)-1] + fmt.Sprintf(" && %s}", ptraceEvents.enum(uint64(ev), true))
		}
	case ws.Continued():
		s = "{WIFCONTINUED(s)}"
	default:
		s = hex(uint64(st))
	}
	return "[" + s + "]"
}

var ptraceEvents = xlat{
	{1, "PTRACE_EVENT_FORK"}, {2, "PTRACE_EVENT_VFORK"}, {3, "PTRACE_EVENT_CLONE"},
	{4, "PTRACE_EVENT_EXEC"}, {5, "PTRACE_EVENT_VFORK_DONE"}, {6, "PTRACE_EVENT_EXIT"},
	{7, "PTRACE_EVENT_SECCOMP"}, {128, "PTRACE_EVENT_STOP"},
}
