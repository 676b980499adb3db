//go:build linux && amd64

package syscalls

import (
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// kernelErrnos are the kernel-internal codes (include/linux/errno.h) that
// leak to tracers; strace names them with these texts.
var kernelErrnos = map[int][2]string{
	512: {"ERESTARTSYS", "To be restarted if SA_RESTART is set"},
	513: {"ERESTARTNOINTR", "To be restarted"},
	514: {"ERESTARTNOHAND", "To be restarted if no handler"},
	515: {"ENOIOCTLCMD", "No ioctl command"},
	516: {"ERESTART_RESTARTBLOCK", "Interrupted by signal"},
	517: {"EPROBE_DEFER", "Requested probe deferral"},
	518: {"EOPENSTALE", "Open file stale"},
	519: {"ENOPARAM", "Parameter not supported"},
	521: {"EBADHANDLE", "Illegal NFS file handle"},
	522: {"ENOTSYNC", "Update synchronization mismatch"},
	523: {"EBADCOOKIE", "Cookie is stale"},
	524: {"ENOTSUPP", "Operation is not supported"},
	525: {"ETOOSMALL", "Buffer or request is too small"},
	526: {"ESERVERFAULT", "An untranslatable error occurred"},
	527: {"EBADTYPE", "Type not supported by server"},
	528: {"EJUKEBOX", "Request initiated, but will not complete before timeout"},
	529: {"EIOCBQUEUED", "iocb queued, will get completion event"},
	530: {"ERECALLCONFLICT", "conflict with recalled state"},
}

// errnoFix: where x/sys/unix's name or text differs from strace's
// (which prints the kernel's canonical name and glibc's strerror).
var errnoFix = map[int][2]string{
	int(unix.EOPNOTSUPP): {"EOPNOTSUPP", ""},
	int(unix.EHWPOISON):  {"", "Memory page has hardware error"},
}

// errnoInfo returns strace's name and message for errno n.
func errnoInfo(n int) (name, msg string, ok bool) {
	if k, ok := kernelErrnos[n]; ok {
		return k[0], k[1], true
	}
	name = unix.ErrnoName(unix.Errno(n))
	if name == "" {
		return "", "", false
	}
	msg = unix.Errno(n).Error()
	msg = strings.ToUpper(msg[:1]) + msg[1:]
	if f, ok := errnoFix[n]; ok {
		if f[0] != "" {
			name = f[0]
		}
		if f[1] != "" {
			msg = f[1]
		}
	}
	return name, msg, true
}

// ErrnoName returns the errno name of a raw return value (-2: "ENOENT"),
// ok false when ret is not an error return or the code has no name.
func ErrnoName(ret int64) (string, bool) {
	if !isErr(ret) {
		return "", false
	}
	name, _, ok := errnoInfo(int(-ret))
	return name, ok
}

// isErr: the kernel returns errors as -4095..-1.
func isErr(ret int64) bool { return ret < 0 && ret >= -4095 }

// errnoLabel is an errno for use inside a line (si_errno=EPERM).
func errnoLabel(n int) string {
	if name, _, ok := errnoInfo(n); ok {
		return name
	}
	return strconv.Itoa(n)
}

// restartErrnos are the codes of a call a signal interrupted, which the
// kernel restarts or turns into EINTR: the call has not returned to the
// program, so strace shows "? ERESTARTSYS (...)" rather than "-1".
var restartErrnos = map[int]bool{512: true, 513: true, 514: true, 516: true}

// errResult is strace's error return text: "-1 ENOENT (No such file or
// directory)", or "? ERESTARTSYS (To be restarted if SA_RESTART is set)".
func errResult(ret int64) string {
	name, msg, ok := errnoInfo(int(-ret))
	if restartErrnos[int(-ret)] {
		return "? " + name + " (" + msg + ")"
	}
	if !ok {
		return "-1 (errno " + strconv.FormatInt(-ret, 10) + ")"
	}
	return "-1 " + name + " (" + msg + ")"
}
