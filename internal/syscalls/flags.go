//go:build linux && amd64

package syscalls

import "golang.org/x/sys/unix"

// Flag and enum tables, in strace 6.1's order (its xlat/*.in files);
// values from x/sys/unix.

// oLargefile is the kernel's value; unix.O_LARGEFILE is 0 on amd64
// (glibc's), but a tracee may pass the kernel bit and strace names it.
const oLargefile = 0o100000

// Values x/sys/unix does not define (uapi headers).
const (
	protSem         = 0x8
	atStatxSyncType = 0x6000
)

var openAccess = xlat{{unix.O_RDONLY, "O_RDONLY"}, {unix.O_WRONLY, "O_WRONLY"}, {unix.O_RDWR, "O_RDWR"}}

var openFlags = xlat{
	{unix.O_CREAT, "O_CREAT"}, {unix.O_EXCL, "O_EXCL"}, {unix.O_NOCTTY, "O_NOCTTY"},
	{unix.O_TRUNC, "O_TRUNC"}, {unix.O_APPEND, "O_APPEND"}, {unix.O_NONBLOCK, "O_NONBLOCK"},
	{unix.O_SYNC, "O_SYNC"}, {unix.O_DSYNC, "O_DSYNC"}, {unix.O_ASYNC, "O_ASYNC"},
	{unix.O_DIRECT, "O_DIRECT"}, {oLargefile, "O_LARGEFILE"},
	{unix.O_NOFOLLOW, "O_NOFOLLOW"}, {unix.O_NOATIME, "O_NOATIME"}, {unix.O_CLOEXEC, "O_CLOEXEC"},
	// strace's order: O_PATH, then O_TMPFILE (which holds O_DIRECTORY's
	// bit), then O_DIRECTORY.
	{unix.O_PATH, "O_PATH"}, {unix.O_TMPFILE, "O_TMPFILE"}, {unix.O_DIRECTORY, "O_DIRECTORY"},
}

// openFlagsStr is strace's tprint_open_modes: access mode, then flags.
func openFlagsStr(v uint64) string {
	s := openAccess.enum(v&unix.O_ACCMODE, true)
	if v&unix.O_ACCMODE == unix.O_ACCMODE {
		s = "O_ACCMODE"
	}
	if rest := v &^ unix.O_ACCMODE; rest != 0 {
		s += "|" + openFlags.flags(rest)
	}
	return s
}

var accessModes = xlat{{unix.R_OK, "R_OK"}, {unix.W_OK, "W_OK"}, {unix.X_OK, "X_OK"}}

var atFlags = xlat{
	{unix.AT_SYMLINK_NOFOLLOW, "AT_SYMLINK_NOFOLLOW"}, {unix.AT_REMOVEDIR, "AT_REMOVEDIR"},
	{unix.AT_SYMLINK_FOLLOW, "AT_SYMLINK_FOLLOW"}, {unix.AT_NO_AUTOMOUNT, "AT_NO_AUTOMOUNT"},
	{unix.AT_EMPTY_PATH, "AT_EMPTY_PATH"}, {unix.AT_STATX_FORCE_SYNC, "AT_STATX_FORCE_SYNC"},
	{unix.AT_STATX_DONT_SYNC, "AT_STATX_DONT_SYNC"}, {unix.AT_RECURSIVE, "AT_RECURSIVE"},
}

// statxFlags: the sync type is an enum in the low bits shown first.
func statxFlags(v uint64) string {
	sync := v & atStatxSyncType
	s := xlat{{unix.AT_STATX_SYNC_AS_STAT, "AT_STATX_SYNC_AS_STAT"},
		{unix.AT_STATX_FORCE_SYNC, "AT_STATX_FORCE_SYNC"},
		{unix.AT_STATX_DONT_SYNC, "AT_STATX_DONT_SYNC"}}.enum(sync, true)
	if rest := v &^ atStatxSyncType; rest != 0 {
		s += "|" + atFlags.flags(rest)
	}
	return s
}

var protFlags = xlat{
	{unix.PROT_READ, "PROT_READ"}, {unix.PROT_WRITE, "PROT_WRITE"}, {unix.PROT_EXEC, "PROT_EXEC"},
	{protSem, "PROT_SEM"}, {unix.PROT_GROWSDOWN, "PROT_GROWSDOWN"}, {unix.PROT_GROWSUP, "PROT_GROWSUP"},
	{0, "PROT_NONE"},
}

var mapTypes = xlat{{unix.MAP_SHARED, "MAP_SHARED"}, {unix.MAP_PRIVATE, "MAP_PRIVATE"},
	{unix.MAP_SHARED_VALIDATE, "MAP_SHARED_VALIDATE"}}

var mapFlags = xlat{
	{unix.MAP_FIXED, "MAP_FIXED"}, {unix.MAP_ANONYMOUS, "MAP_ANONYMOUS"}, {unix.MAP_32BIT, "MAP_32BIT"},
	{unix.MAP_GROWSDOWN, "MAP_GROWSDOWN"}, {unix.MAP_DENYWRITE, "MAP_DENYWRITE"},
	{unix.MAP_EXECUTABLE, "MAP_EXECUTABLE"}, {unix.MAP_LOCKED, "MAP_LOCKED"},
	{unix.MAP_NORESERVE, "MAP_NORESERVE"}, {unix.MAP_POPULATE, "MAP_POPULATE"},
	{unix.MAP_NONBLOCK, "MAP_NONBLOCK"}, {unix.MAP_STACK, "MAP_STACK"}, {unix.MAP_HUGETLB, "MAP_HUGETLB"},
	{unix.MAP_SYNC, "MAP_SYNC"}, {unix.MAP_FIXED_NOREPLACE, "MAP_FIXED_NOREPLACE"},
	{0x4000000, "MAP_UNINITIALIZED"},
}

func mapFlagsStr(v uint64) string {
	s := mapTypes.enum(v&0xf, true)
	if rest := v &^ 0xf; rest != 0 {
		s += "|" + mapFlags.flags(rest)
	}
	return s
}

var madvAdvice = xlat{
	{unix.MADV_NORMAL, "MADV_NORMAL"}, {unix.MADV_RANDOM, "MADV_RANDOM"},
	{unix.MADV_SEQUENTIAL, "MADV_SEQUENTIAL"}, {unix.MADV_WILLNEED, "MADV_WILLNEED"},
	{unix.MADV_DONTNEED, "MADV_DONTNEED"}, {unix.MADV_FREE, "MADV_FREE"}, {unix.MADV_REMOVE, "MADV_REMOVE"},
	{unix.MADV_DONTFORK, "MADV_DONTFORK"}, {unix.MADV_DOFORK, "MADV_DOFORK"},
	{unix.MADV_MERGEABLE, "MADV_MERGEABLE"}, {unix.MADV_UNMERGEABLE, "MADV_UNMERGEABLE"},
	{unix.MADV_HUGEPAGE, "MADV_HUGEPAGE"}, {unix.MADV_NOHUGEPAGE, "MADV_NOHUGEPAGE"},
	{unix.MADV_DONTDUMP, "MADV_DONTDUMP"}, {unix.MADV_DODUMP, "MADV_DODUMP"},
	{unix.MADV_WIPEONFORK, "MADV_WIPEONFORK"}, {unix.MADV_KEEPONFORK, "MADV_KEEPONFORK"},
	{unix.MADV_COLD, "MADV_COLD"}, {unix.MADV_PAGEOUT, "MADV_PAGEOUT"},
	{unix.MADV_POPULATE_READ, "MADV_POPULATE_READ"}, {unix.MADV_POPULATE_WRITE, "MADV_POPULATE_WRITE"},
	{unix.MADV_HWPOISON, "MADV_HWPOISON"}, {101, "MADV_SOFT_OFFLINE"},
}

var cloneFlags = xlat{
	{unix.CLONE_VM, "CLONE_VM"}, {unix.CLONE_FS, "CLONE_FS"}, {unix.CLONE_FILES, "CLONE_FILES"},
	{unix.CLONE_SIGHAND, "CLONE_SIGHAND"}, {unix.CLONE_PIDFD, "CLONE_PIDFD"},
	{unix.CLONE_PTRACE, "CLONE_PTRACE"}, {unix.CLONE_VFORK, "CLONE_VFORK"},
	{unix.CLONE_PARENT, "CLONE_PARENT"}, {unix.CLONE_THREAD, "CLONE_THREAD"},
	{unix.CLONE_NEWNS, "CLONE_NEWNS"}, {unix.CLONE_SYSVSEM, "CLONE_SYSVSEM"},
	{unix.CLONE_SETTLS, "CLONE_SETTLS"}, {unix.CLONE_PARENT_SETTID, "CLONE_PARENT_SETTID"},
	{unix.CLONE_CHILD_CLEARTID, "CLONE_CHILD_CLEARTID"}, {unix.CLONE_DETACHED, "CLONE_DETACHED"},
	{unix.CLONE_UNTRACED, "CLONE_UNTRACED"}, {unix.CLONE_CHILD_SETTID, "CLONE_CHILD_SETTID"},
	{unix.CLONE_NEWCGROUP, "CLONE_NEWCGROUP"}, {unix.CLONE_NEWUTS, "CLONE_NEWUTS"},
	{unix.CLONE_NEWIPC, "CLONE_NEWIPC"}, {unix.CLONE_NEWUSER, "CLONE_NEWUSER"},
	{unix.CLONE_NEWPID, "CLONE_NEWPID"}, {unix.CLONE_NEWNET, "CLONE_NEWNET"}, {unix.CLONE_IO, "CLONE_IO"},
	{unix.CLONE_CLEAR_SIGHAND, "CLONE_CLEAR_SIGHAND"}, {unix.CLONE_INTO_CGROUP, "CLONE_INTO_CGROUP"},
	{unix.CLONE_NEWTIME, "CLONE_NEWTIME"},
}

// cloneFlagsStr: the low byte (CSIGNAL) is the exit signal, named last.
func cloneFlagsStr(v uint64) string {
	sig, fl := v&0xff, v&^0xff
	switch {
	case fl == 0 && sig == 0:
		return "0"
	case fl == 0:
		return signalName(int(sig))
	case sig == 0:
		return cloneFlags.flags(fl)
	}
	return cloneFlags.flags(fl) + "|" + signalName(int(sig))
}

var sigHow = xlat{{unix.SIG_BLOCK, "SIG_BLOCK"}, {unix.SIG_UNBLOCK, "SIG_UNBLOCK"}, {unix.SIG_SETMASK, "SIG_SETMASK"}}

var fadvice = xlat{{unix.FADV_NORMAL, "POSIX_FADV_NORMAL"}, {unix.FADV_RANDOM, "POSIX_FADV_RANDOM"},
	{unix.FADV_SEQUENTIAL, "POSIX_FADV_SEQUENTIAL"}, {unix.FADV_WILLNEED, "POSIX_FADV_WILLNEED"},
	{unix.FADV_DONTNEED, "POSIX_FADV_DONTNEED"}, {unix.FADV_NOREUSE, "POSIX_FADV_NOREUSE"}}

var whences = xlat{{unix.SEEK_SET, "SEEK_SET"}, {unix.SEEK_CUR, "SEEK_CUR"}, {unix.SEEK_END, "SEEK_END"},
	{unix.SEEK_DATA, "SEEK_DATA"}, {unix.SEEK_HOLE, "SEEK_HOLE"}}

var waitOpts = xlat{
	{unix.WNOHANG, "WNOHANG"}, {unix.WUNTRACED, "WSTOPPED"}, {unix.WEXITED, "WEXITED"},
	{unix.WCONTINUED, "WCONTINUED"}, {unix.WNOWAIT, "WNOWAIT"}, {unix.WNOTHREAD, "__WNOTHREAD"},
	{unix.WALL, "__WALL"}, {unix.WCLONE, "__WCLONE"},
}

var grndFlags = xlat{{unix.GRND_NONBLOCK, "GRND_NONBLOCK"}, {unix.GRND_RANDOM, "GRND_RANDOM"}, {unix.GRND_INSECURE, "GRND_INSECURE"}}

var efdFlags = xlat{{unix.EFD_SEMAPHORE, "EFD_SEMAPHORE"}, {unix.EFD_CLOEXEC, "EFD_CLOEXEC"}, {unix.EFD_NONBLOCK, "EFD_NONBLOCK"}}

var epollOps = xlat{{unix.EPOLL_CTL_ADD, "EPOLL_CTL_ADD"}, {unix.EPOLL_CTL_DEL, "EPOLL_CTL_DEL"}, {unix.EPOLL_CTL_MOD, "EPOLL_CTL_MOD"}}

var epollFlags = xlat{{unix.EPOLL_CLOEXEC, "EPOLL_CLOEXEC"}}

var epollEvents = xlat{
	{unix.EPOLLIN, "EPOLLIN"}, {unix.EPOLLPRI, "EPOLLPRI"}, {unix.EPOLLOUT, "EPOLLOUT"},
	{unix.EPOLLERR, "EPOLLERR"}, {unix.EPOLLHUP, "EPOLLHUP"}, {0x20, "EPOLLNVAL"},
	{unix.EPOLLRDNORM, "EPOLLRDNORM"}, {unix.EPOLLRDBAND, "EPOLLRDBAND"},
	{unix.EPOLLWRNORM, "EPOLLWRNORM"}, {unix.EPOLLWRBAND, "EPOLLWRBAND"}, {unix.EPOLLMSG, "EPOLLMSG"},
	{unix.EPOLLRDHUP, "EPOLLRDHUP"}, {unix.EPOLLEXCLUSIVE, "EPOLLEXCLUSIVE"},
	{unix.EPOLLWAKEUP, "EPOLLWAKEUP"}, {unix.EPOLLONESHOT, "EPOLLONESHOT"}, {1 << 31, "EPOLLET"},
}

var pollEvents = xlat{
	{unix.POLLIN, "POLLIN"}, {unix.POLLPRI, "POLLPRI"}, {unix.POLLOUT, "POLLOUT"},
	{unix.POLLERR, "POLLERR"}, {unix.POLLHUP, "POLLHUP"}, {unix.POLLNVAL, "POLLNVAL"},
	{0x40, "POLLRDNORM"}, {0x80, "POLLRDBAND"},
	{0x100, "POLLWRNORM"}, {0x200, "POLLWRBAND"}, {0x400, "POLLMSG"},
	{0x1000, "POLLREMOVE"}, {unix.POLLRDHUP, "POLLRDHUP"},
}

var clockIDs = xlat{
	{unix.CLOCK_REALTIME, "CLOCK_REALTIME"}, {unix.CLOCK_MONOTONIC, "CLOCK_MONOTONIC"},
	{unix.CLOCK_PROCESS_CPUTIME_ID, "CLOCK_PROCESS_CPUTIME_ID"},
	{unix.CLOCK_THREAD_CPUTIME_ID, "CLOCK_THREAD_CPUTIME_ID"},
	{unix.CLOCK_MONOTONIC_RAW, "CLOCK_MONOTONIC_RAW"}, {unix.CLOCK_REALTIME_COARSE, "CLOCK_REALTIME_COARSE"},
	{unix.CLOCK_MONOTONIC_COARSE, "CLOCK_MONOTONIC_COARSE"}, {unix.CLOCK_BOOTTIME, "CLOCK_BOOTTIME"},
	{unix.CLOCK_REALTIME_ALARM, "CLOCK_REALTIME_ALARM"}, {unix.CLOCK_BOOTTIME_ALARM, "CLOCK_BOOTTIME_ALARM"},
	{unix.CLOCK_TAI, "CLOCK_TAI"},
}

var rlimitRes = xlat{
	{unix.RLIMIT_CPU, "RLIMIT_CPU"}, {unix.RLIMIT_FSIZE, "RLIMIT_FSIZE"}, {unix.RLIMIT_DATA, "RLIMIT_DATA"},
	{unix.RLIMIT_STACK, "RLIMIT_STACK"}, {unix.RLIMIT_CORE, "RLIMIT_CORE"}, {unix.RLIMIT_RSS, "RLIMIT_RSS"},
	{unix.RLIMIT_NPROC, "RLIMIT_NPROC"}, {unix.RLIMIT_NOFILE, "RLIMIT_NOFILE"},
	{unix.RLIMIT_MEMLOCK, "RLIMIT_MEMLOCK"}, {unix.RLIMIT_AS, "RLIMIT_AS"}, {unix.RLIMIT_LOCKS, "RLIMIT_LOCKS"},
	{unix.RLIMIT_SIGPENDING, "RLIMIT_SIGPENDING"}, {unix.RLIMIT_MSGQUEUE, "RLIMIT_MSGQUEUE"},
	{unix.RLIMIT_NICE, "RLIMIT_NICE"}, {unix.RLIMIT_RTPRIO, "RLIMIT_RTPRIO"}, {unix.RLIMIT_RTTIME, "RLIMIT_RTTIME"},
}

var msgFlags = xlat{
	{unix.MSG_OOB, "MSG_OOB"}, {unix.MSG_PEEK, "MSG_PEEK"}, {unix.MSG_DONTROUTE, "MSG_DONTROUTE"},
	{unix.MSG_CTRUNC, "MSG_CTRUNC"}, {unix.MSG_PROXY, "MSG_PROXY"}, {unix.MSG_TRUNC, "MSG_TRUNC"},
	{unix.MSG_DONTWAIT, "MSG_DONTWAIT"}, {unix.MSG_EOR, "MSG_EOR"}, {unix.MSG_WAITALL, "MSG_WAITALL"},
	{unix.MSG_FIN, "MSG_FIN"}, {unix.MSG_SYN, "MSG_SYN"}, {unix.MSG_CONFIRM, "MSG_CONFIRM"},
	{unix.MSG_RST, "MSG_RST"}, {unix.MSG_ERRQUEUE, "MSG_ERRQUEUE"}, {unix.MSG_NOSIGNAL, "MSG_NOSIGNAL"},
	{unix.MSG_MORE, "MSG_MORE"}, {unix.MSG_WAITFORONE, "MSG_WAITFORONE"},
	{unix.MSG_FASTOPEN, "MSG_FASTOPEN"}, {unix.MSG_CMSG_CLOEXEC, "MSG_CMSG_CLOEXEC"},
}

var renameFlags = xlat{{unix.RENAME_NOREPLACE, "RENAME_NOREPLACE"}, {unix.RENAME_EXCHANGE, "RENAME_EXCHANGE"}, {unix.RENAME_WHITEOUT, "RENAME_WHITEOUT"}}

var timerFlags = xlat{{unix.TIMER_ABSTIME, "TIMER_ABSTIME"}}

var statxMask = xlat{
	{unix.STATX_ALL, "STATX_ALL"}, {unix.STATX_BASIC_STATS, "STATX_BASIC_STATS"},
	{unix.STATX_TYPE, "STATX_TYPE"}, {unix.STATX_MODE, "STATX_MODE"}, {unix.STATX_NLINK, "STATX_NLINK"},
	{unix.STATX_UID, "STATX_UID"}, {unix.STATX_GID, "STATX_GID"}, {unix.STATX_ATIME, "STATX_ATIME"},
	{unix.STATX_MTIME, "STATX_MTIME"}, {unix.STATX_CTIME, "STATX_CTIME"}, {unix.STATX_INO, "STATX_INO"},
	{unix.STATX_SIZE, "STATX_SIZE"}, {unix.STATX_BLOCKS, "STATX_BLOCKS"}, {unix.STATX_BTIME, "STATX_BTIME"},
	{unix.STATX_MNT_ID, "STATX_MNT_ID"}, {unix.STATX_DIOALIGN, "STATX_DIOALIGN"},
}

var statxAttrs = xlat{
	{unix.STATX_ATTR_COMPRESSED, "STATX_ATTR_COMPRESSED"}, {unix.STATX_ATTR_IMMUTABLE, "STATX_ATTR_IMMUTABLE"},
	{unix.STATX_ATTR_APPEND, "STATX_ATTR_APPEND"}, {unix.STATX_ATTR_NODUMP, "STATX_ATTR_NODUMP"},
	{unix.STATX_ATTR_ENCRYPTED, "STATX_ATTR_ENCRYPTED"}, {unix.STATX_ATTR_AUTOMOUNT, "STATX_ATTR_AUTOMOUNT"},
	{unix.STATX_ATTR_MOUNT_ROOT, "STATX_ATTR_MOUNT_ROOT"}, {unix.STATX_ATTR_VERITY, "STATX_ATTR_VERITY"},
	{unix.STATX_ATTR_DAX, "STATX_ATTR_DAX"},
}

var fileTypes = xlat{
	{unix.S_IFREG, "S_IFREG"}, {unix.S_IFSOCK, "S_IFSOCK"}, {unix.S_IFIFO, "S_IFIFO"},
	{unix.S_IFLNK, "S_IFLNK"}, {unix.S_IFDIR, "S_IFDIR"}, {unix.S_IFBLK, "S_IFBLK"}, {unix.S_IFCHR, "S_IFCHR"},
}

// modeStr is strace's print_symbolic_mode_t: S_IFREG|0644.
func modeStr(m uint64) string {
	t, ok := fileTypes.name(m & unix.S_IFMT)
	if !ok {
		return octal(m)
	}
	for _, b := range []struct {
		bit  uint64
		name string
	}{{unix.S_ISUID, "S_ISUID"}, {unix.S_ISGID, "S_ISGID"}, {unix.S_ISVTX, "S_ISVTX"}} {
		if m&b.bit != 0 {
			t += "|" + b.name
		}
	}
	return t + "|" + octal(m&0o777)
}
