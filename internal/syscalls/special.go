//go:build linux && amd64

package syscalls

import (
	"encoding/binary"
	"fmt"
	"strconv"

	"golang.org/x/sys/unix"
)

// special formats the calls whose arguments depend on one another (the
// command decides the rest), returning the arguments and where the
// outputs start.
var special map[string]func(*ctx) ([]string, int)

func init() {
	special = map[string]func(*ctx) ([]string, int){
		"clone": (*ctx).cloneArgs, "futex": (*ctx).futexArgs, "fcntl": (*ctx).fcntlArgs,
		"ioctl": (*ctx).ioctlArgs, "prctl": (*ctx).prctlArgs, "arch_prctl": (*ctx).archPrctlArgs,
		"setsockopt": (*ctx).sockoptArgs, "getsockopt": (*ctx).sockoptArgs,
		"rt_sigreturn": (*ctx).sigreturnArgs, "mremap": (*ctx).mremapArgs,
		"membarrier": (*ctx).membarrierArgs, "personality": (*ctx).personalityArgs,
		"clone3": (*ctx).clone3Args,
	}
}

func u32(v uint64) string { return strconv.FormatUint(uint64(uint32(v)), 10) }
func i32(v uint64) string { return strconv.Itoa(int(int32(v))) }

// intAt shows an int the kernel wrote or read at argument a: [42].
func (x *ctx) intAt(a int, exit bool) string {
	b := x.data(a, exit)
	if x.arg(a) == 0 {
		return "NULL"
	}
	if len(b) < 4 || (exit && x.failed()) {
		return hex(x.arg(a))
	}
	return "[" + strconv.Itoa(int(int32(le.Uint32(b)))) + "]"
}

// cloneArgs: strace names clone's arguments (x86_64 order: flags,
// stack, parent_tid, child_tid, tls) and shows only those the flags use.
func (x *ctx) cloneArgs() ([]string, int) {
	fl := x.arg(0)
	out := []string{"child_stack=" + ptr(x.arg(1)), "flags=" + cloneFlagsStr(fl)}
	if fl&(unix.CLONE_PARENT_SETTID|unix.CLONE_PIDFD) != 0 {
		name := "parent_tid="
		if fl&unix.CLONE_PARENT_SETTID == 0 {
			name = "pidfd="
		}
		out = append(out, name+x.intAt(2, true))
	}
	if fl&unix.CLONE_SETTLS != 0 {
		out = append(out, "tls="+ptr(x.arg(4)))
	}
	if fl&(unix.CLONE_CHILD_SETTID|unix.CLONE_CHILD_CLEARTID) != 0 {
		out = append(out, "child_tidptr="+ptr(x.arg(3)))
	}
	return out, 2
}

func (x *ctx) futexArgs() ([]string, int) {
	op := x.arg(1)
	out := []string{ptr(x.arg(0)), futexOpStr(uint64(uint32(op)))}
	val, val2, uaddr2 := u32(x.arg(2)), u32(x.arg(3)), ptr(x.arg(4))
	timeout := x.structArg(3, KindTimespec, false)
	val3 := u32(x.arg(5))
	switch op &^ (futexPrivateFlag | futexClockRealtime) {
	case futexWait:
		out = append(out, val, timeout)
	case futexWake:
		out = append(out, val)
	case futexWaitBitset:
		out = append(out, val, timeout, bitset(x.arg(5)))
	case futexWakeBitset:
		out = append(out, val, bitset(x.arg(5)))
	case futexRequeue:
		out = append(out, val, val2, uaddr2)
	case futexCmpRequeue, futexCmpRequeuePi:
		out = append(out, val, val2, uaddr2, val3)
	case futexWakeOp:
		out = append(out, val, val2, uaddr2, hex(uint64(uint32(x.arg(5)))))
	case futexLockPi, 13:
		out = append(out, timeout)
	case futexUnlockPi, futexTrylockPi:
	case futexWaitRequeuePi:
		out = append(out, val, timeout, uaddr2)
	default:
		out = append(out, hex(x.arg(2)), hex(x.arg(3)), hex(x.arg(4)), hex(x.arg(5)))
	}
	return out, len(out)
}

func bitset(v uint64) string {
	if uint32(v) == 0xffffffff {
		return "FUTEX_BITSET_MATCH_ANY"
	}
	return hex(uint64(uint32(v)))
}

var lockTypes = xlat{{unix.F_RDLCK, "F_RDLCK"}, {unix.F_WRLCK, "F_WRLCK"}, {unix.F_UNLCK, "F_UNLCK"}}

func (x *ctx) fcntlArgs() ([]string, int) {
	cmd := uint64(uint32(x.arg(1)))
	out := []string{x.fd(x.arg(0)), fcntlCmds.enum(cmd, true)}
	v := x.arg(2)
	switch cmd {
	case unix.F_GETFD, unix.F_GETFL, unix.F_GETOWN, unix.F_GETSIG, unix.F_GETLEASE,
		unix.F_GETPIPE_SZ, unix.F_GET_SEALS:
	case unix.F_SETFD:
		out = append(out, fdFlags.flags(uint64(uint32(v))))
	case unix.F_SETFL:
		out = append(out, openFlagsStr(uint64(uint32(v))))
	case unix.F_SETSIG:
		out = append(out, signalName(int(int32(v))))
	case unix.F_ADD_SEALS:
		out = append(out, fSeals.flags(uint64(uint32(v))))
	case unix.F_SETLEASE:
		out = append(out, lockTypes.enum(uint64(uint32(v)), true))
	case unix.F_SETLK, unix.F_SETLKW, unix.F_GETLK, unix.F_OFD_SETLK, unix.F_OFD_SETLKW, unix.F_OFD_GETLK:
		b := x.data(2, false)
		if len(b) < 32 {
			out = append(out, ptr(v))
			break
		}
		out = append(out, fmt.Sprintf("{l_type=%s, l_whence=%s, l_start=%d, l_len=%d}",
			lockTypes.enum(uint64(le.Uint16(b)), true), whences.enum(uint64(le.Uint16(b[2:])), false),
			int64(le.Uint64(b[8:])), int64(le.Uint64(b[16:]))))
	default:
		out = append(out, i32(v))
	}
	return out, len(out)
}

// ioctl requests whose argument is an int pointer, and which side.
var (
	ioctlIntIn  = set("FIONBIO", "TIOCSPGRP", "TIOCSPTLCK", "FIOASYNC")
	ioctlIntOut = set("FIONREAD", "TIOCGPGRP", "TIOCGPTN", "TIOCOUTQ", "TIOCGSID", "TIOCGPTLCK", "TIOCMGET")
	ioctlOut    = set("TIOCGWINSZ", "FS_IOC_GETFLAGS")
)

func (x *ctx) ioctlArgs() ([]string, int) {
	req := ioctlReqStr(x.arg(1))
	out := []string{x.fd(x.arg(0)), req}
	switch {
	case ioctlIntIn[req]:
		return append(out, x.intAt(2, false)), 3
	case ioctlIntOut[req]:
		return append(out, x.intAt(2, true)), 2
	case req == "TIOCGWINSZ" || req == "TIOCSWINSZ":
		exit := req == "TIOCGWINSZ"
		b := x.data(2, exit)
		s := ptr(x.arg(2))
		if len(b) >= 8 && !(exit && x.failed()) && !x.o.Terse {
			s = fmt.Sprintf("{ws_row=%d, ws_col=%d, ws_xpixel=%d, ws_ypixel=%d}",
				le.Uint16(b), le.Uint16(b[2:]), le.Uint16(b[4:]), le.Uint16(b[6:]))
		}
		if exit {
			return append(out, s), 2
		}
		return append(out, s), 3
	case x.arg(1)&0xffffffff == unix.TCGETS || x.arg(1)&0xffffffff == unix.TCSETS ||
		x.arg(1)&0xffffffff == unix.TCSETSW || x.arg(1)&0xffffffff == unix.TCSETSF:
		exit := x.arg(1)&0xffffffff == unix.TCGETS
		s := ptr(x.arg(2))
		if b := x.data(2, exit); len(b) >= sizeTermios && !(exit && x.failed()) && !x.o.Terse {
			s = termiosStr(b, x.o.Full)
		}
		if exit {
			return append(out, s), 2
		}
		return append(out, s), 3
	case ioctlOut[req]:
		return append(out, ptr(x.arg(2))), 2
	case req == "FIOCLEX" || req == "FIONCLEX" || req == "TIOCNOTTY" || req == "TIOCEXCL" || req == "TIOCNXCL":
		return out, 2
	case req == "TCXONC" || req == "TCFLSH" || req == "TCSBRK" || req == "TIOCSCTTY" || req == "BTRFS_IOC_CLONE or FICLONE":
		return append(out, strconv.FormatUint(x.arg(2), 10)), 3
	}
	return append(out, hex(x.arg(2))), 3
}

func (x *ctx) prctlArgs() ([]string, int) {
	op := uint64(uint32(x.arg(0)))
	out := []string{prctlOps.enum(op, true)}
	switch op {
	case unix.PR_GET_DUMPABLE, unix.PR_GET_KEEPCAPS, unix.PR_GET_SECCOMP, unix.PR_GET_TIMERSLACK,
		unix.PR_GET_NO_NEW_PRIVS, unix.PR_GET_THP_DISABLE, unix.PR_GET_IO_FLUSHER,
		unix.PR_TASK_PERF_EVENTS_DISABLE, unix.PR_TASK_PERF_EVENTS_ENABLE, unix.PR_GET_SECUREBITS:
	case unix.PR_SET_NAME:
		out = append(out, x.str(1, false, 16, true, false))
	case unix.PR_GET_NAME:
		return append(out, x.str(1, true, 16, true, false)), 1
	case unix.PR_SET_PDEATHSIG:
		out = append(out, signalName(int(int32(x.arg(1)))))
	case unix.PR_GET_PDEATHSIG, unix.PR_GET_CHILD_SUBREAPER:
		return append(out, x.intAt(1, true)), 1
	case unix.PR_SET_DUMPABLE:
		out = append(out, dumpable.enum(x.arg(1), false))
	case unix.PR_CAPBSET_READ, unix.PR_CAPBSET_DROP, unix.PR_CAP_AMBIENT:
		caps, _ := x.prctlCapArgs(op)
		out = append(out, caps...)
	case unix.PR_SET_KEEPCAPS, unix.PR_SET_TIMERSLACK, unix.PR_SET_CHILD_SUBREAPER,
		unix.PR_SET_THP_DISABLE, unix.PR_SET_IO_FLUSHER:
		out = append(out, strconv.FormatUint(x.arg(1), 10))
	case unix.PR_SET_PTRACER:
		if int32(x.arg(1)) == -1 {
			out = append(out, "PR_SET_PTRACER_ANY")
		} else {
			out = append(out, i32(x.arg(1)))
		}
	case unix.PR_SET_NO_NEW_PRIVS:
		for a := 1; a < 5; a++ {
			out = append(out, strconv.FormatUint(x.arg(a), 10))
		}
	default:
		for a := 1; a < 5; a++ {
			out = append(out, hex(x.arg(a)))
		}
	}
	return out, len(out)
}

func (x *ctx) archPrctlArgs() ([]string, int) {
	op := uint64(uint32(x.arg(0)))
	out := []string{archPrctlOps.enum(op, true)}
	if op == 0x1003 || op == 0x1004 { // ARCH_GET_FS, ARCH_GET_GS write an address
		b := x.data(1, true)
		if len(b) >= 8 && !x.failed() {
			return append(out, "["+hex(le.Uint64(b))+"]"), 1
		}
		return append(out, hex(x.arg(1))), 1
	}
	return append(out, hex(x.arg(1))), 2
}

func (x *ctx) sockoptArgs() ([]string, int) {
	get := x.in.Name == "getsockopt"
	level := uint64(uint32(x.arg(1)))
	name := sockoptName(level, uint64(uint32(x.arg(2))))
	out := []string{x.fd(x.arg(0)), sockLevels.enum(level, false), name}
	if get {
		ln := x.data(4, true)
		val := hex(x.arg(3))
		if len(ln) >= 4 && le.Uint32(ln) == 4 {
			val = x.intAt(3, true)
		}
		return append(out, val, x.intAt(4, true)), 3
	}
	val := ptr(x.arg(3))
	if uint32(x.arg(4)) == 4 {
		val = x.intAt(3, false)
	}
	return append(out, val, u32(x.arg(4))), 5
}

// sigframeRegs is the offset of the sigcontext in the ucontext
// rt_sigreturn finds at the stack pointer.
const sigframeRegs = 8 + 8 + 24

// sigreturnArgs shows the mask rt_sigreturn restores, from the signal
// frame at the stack pointer, as strace does: rt_sigreturn({mask=[]}).
func (x *ctx) sigreturnArgs() ([]string, int) {
	b := x.data(0, false)
	if len(b) < 256+8 {
		return nil, 0
	}
	return []string{"{mask=" + sigsetStr(binary.LittleEndian.Uint64(b[256:])) + "}"}, 1
}

// SigreturnRet is what rt_sigreturn returns, the rax of the frame it
// restores, from its entry capture; false when not captured. For an
// engine that sees no exit of the call (the kernel's exit tracepoints
// skip it: the restored orig_ax is -1).
func SigreturnRet(c *Call) (int64, bool) {
	if c.Nr != 15 || len(c.Entry) == 0 || len(c.Entry[0]) < 256+8 { // __NR_rt_sigreturn
		return 0, false
	}
	return int64(binary.LittleEndian.Uint64(c.Entry[0][104:])), true
}
