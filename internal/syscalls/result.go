//go:build linux && amd64

package syscalls

import (
	"strconv"

	"golang.org/x/sys/unix"
)

// hexReturners return an address.
var hexReturners = set("mmap", "brk", "mremap", "shmat")

// fdResult: calls whose return is a new descriptor (-y shows its path).
var fdResult = set("open", "openat", "openat2", "creat", "dup", "dup2", "dup3", "socket",
	"accept", "accept4", "epoll_create", "epoll_create1", "eventfd", "eventfd2",
	"memfd_create", "pidfd_open", "pidfd_getfd", "signalfd", "signalfd4", "timerfd_create",
	"inotify_init", "inotify_init1", "fanotify_init", "perf_event_open", "userfaultfd",
	"open_by_handle_at", "open_tree", "fsopen", "fsmount", "fspick", "mq_open", "bpf",
	"io_uring_setup", "memfd_secret", "landlock_create_ruleset")

// decodedResult: calls whose result result decodes beyond hexReturners
// and fdResult (moreResult's too).
var decodedResult = set("umask", "fcntl", "prctl", "poll", "ppoll", "select", "pselect6", "personality", "membarrier")

// result is the decoded result (Formatter.AppendResult's slow path).
func (x *ctx) result() string {
	c := x.c
	if !c.Returned {
		return "?"
	}
	r := c.Ret
	if isErr(r) {
		return errResult(r)
	}
	if x.o.Raw {
		return hex(uint64(r))
	}
	if s, ok := x.moreResult(); ok {
		return s
	}
	name := x.in.Name
	switch {
	case hexReturners[name]:
		return hex(uint64(r))
	case name == "umask":
		return octal(uint64(r))
	case fdResult[name]:
		return x.fd(uint64(r))
	case name == "fcntl":
		return x.fcntlResult()
	case name == "prctl" && x.arg(0) == unix.PR_GET_DUMPABLE:
		return strconv.FormatInt(r, 10) + " (" + dumpable.enum(uint64(r), false) + ")"
	case name == "poll" || name == "ppoll":
		return x.pollResult()
	case name == "select" || name == "pselect6":
		return x.selectResult()
	}
	return strconv.FormatInt(r, 10)
}

func (x *ctx) fcntlResult() string {
	r := x.c.Ret
	switch x.arg(1) {
	case unix.F_GETFL:
		return hex(uint64(r)) + " (flags " + openFlagsStr(uint64(r)) + ")"
	case unix.F_GETFD:
		if r == 0 {
			return "0"
		}
		return hex(uint64(r)) + " (flags " + fdFlags.flags(uint64(r)) + ")"
	case unix.F_DUPFD, unix.F_DUPFD_CLOEXEC:
		return x.fd(uint64(r))
	case unix.F_GETOWN:
		return strconv.FormatInt(r, 10)
	}
	return strconv.FormatInt(r, 10)
}
