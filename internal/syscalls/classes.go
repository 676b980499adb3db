//go:build linux && amd64

package syscalls

// Classes, strace's -e trace=%name sets.
const (
	ClassFile       Class = 1 << iota // %file: takes a file name
	ClassProcess                      // %process: process lifecycle
	ClassNetwork                      // %network, %net: sockets
	ClassSignal                       // %signal
	ClassIPC                          // %ipc: SysV IPC
	ClassDesc                         // %desc: takes or returns a descriptor
	ClassMemory                       // %memory: memory mapping
	ClassCreds                        // %creds: user/group ids, capabilities
	ClassClock                        // %clock: read or set clocks
	ClassStat                         // %stat: stat
	ClassLstat                        // %lstat: lstat
	ClassFstat                        // %fstat: fstat, newfstatat, statx
	ClassStatLike                     // %%stat: any of the three
	ClassStatfs                       // %statfs
	ClassFstatfs                      // %fstatfs
	ClassStatfsLike                   // %%statfs: statfs, fstatfs, ustat
	ClassPure                         // %pure: no arguments, always succeed
)

// classNames are the names Select accepts, with their set.
var classNames = []struct {
	name string
	c    Class
}{
	{"%file", ClassFile}, {"%process", ClassProcess}, {"%network", ClassNetwork},
	{"%net", ClassNetwork}, {"%signal", ClassSignal}, {"%ipc", ClassIPC}, {"%desc", ClassDesc},
	{"%memory", ClassMemory}, {"%creds", ClassCreds}, {"%clock", ClassClock}, {"%stat", ClassStat},
	{"%lstat", ClassLstat}, {"%fstat", ClassFstat}, {"%%stat", ClassStatLike},
	{"%statfs", ClassStatfs}, {"%fstatfs", ClassFstatfs}, {"%%statfs", ClassStatfsLike},
	{"%pure", ClassPure},
}

// classLists are the classes given by hand (strace's syscallent flags);
// %file and %desc are mostly derived from the arguments in classesOf.
var classLists = map[Class][]string{
	ClassFile: {"getcwd", "fanotify_mark", "quotactl", "umount2", "statfs", "swapon", "swapoff",
		"inotify_add_watch", "name_to_handle_at", "open_tree", "move_mount", "fspick",
		"mount_setattr", "setxattr", "lsetxattr", "getxattr", "lgetxattr", "listxattr",
		"llistxattr", "removexattr", "lremovexattr", "execve", "execveat", "openat2", "statx",
		"utime", "utimes", "futimesat", "utimensat", "acct", "chroot", "pivot_root", "mount",
		"uselib", "truncate", "symlink", "symlinkat", "rename", "renameat", "renameat2",
		"link", "linkat", "readlink", "readlinkat", "fchmodat", "fchownat", "mknod", "mknodat",
		"unlink", "unlinkat", "rmdir", "mkdir", "mkdirat", "chdir", "chmod", "chown", "lchown",
		"creat", "open", "openat", "access", "faccessat", "faccessat2", "stat", "lstat",
		"newfstatat", "landlock_add_rule", "fchmodat2", "setxattrat", "getxattrat",
		"listxattrat", "removexattrat"},
	ClassProcess: {"clone", "clone3", "fork", "vfork", "execve", "execveat", "exit", "exit_group",
		"wait4", "waitid", "kill", "tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo",
		"pidfd_send_signal", "unshare"},
	ClassNetwork: {"socket", "socketpair", "bind", "connect", "listen", "accept", "accept4",
		"getsockname", "getpeername", "sendto", "recvfrom", "setsockopt", "getsockopt",
		"shutdown", "sendmsg", "recvmsg", "sendmmsg", "recvmmsg"},
	ClassSignal: {"rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigpending",
		"rt_sigtimedwait", "rt_sigqueueinfo", "rt_sigsuspend", "rt_tgsigqueueinfo", "kill",
		"tkill", "tgkill", "sigaltstack", "signalfd", "signalfd4", "pause", "pidfd_send_signal"},
	ClassIPC: {"msgget", "msgsnd", "msgrcv", "msgctl", "semget", "semop", "semctl",
		"semtimedop", "shmget", "shmat", "shmctl", "shmdt"},
	ClassMemory: {"brk", "mmap", "munmap", "mprotect", "mremap", "msync", "mincore", "madvise",
		"mlock", "mlock2", "munlock", "mlockall", "munlockall", "remap_file_pages", "mbind",
		"get_mempolicy", "set_mempolicy", "set_mempolicy_home_node", "migrate_pages",
		"move_pages", "shmat", "shmdt", "pkey_mprotect", "process_madvise", "process_mrelease",
		"map_shadow_stack", "mseal"},
	ClassCreds: {"getuid", "geteuid", "getgid", "getegid", "setuid", "setgid", "setreuid",
		"setregid", "getgroups", "setgroups", "setresuid", "getresuid", "setresgid",
		"getresgid", "setfsuid", "setfsgid", "capget", "capset"},
	ClassClock: {"adjtimex", "clock_adjtime", "clock_getres", "clock_gettime",
		"clock_settime", "gettimeofday", "settimeofday", "time"},
	ClassStat:       {"stat"},
	ClassLstat:      {"lstat"},
	ClassFstat:      {"fstat", "newfstatat", "statx"},
	ClassStatLike:   {"stat", "lstat", "fstat", "newfstatat", "statx"},
	ClassStatfs:     {"statfs"},
	ClassFstatfs:    {"fstatfs"},
	ClassStatfsLike: {"statfs", "fstatfs", "ustat"},
	ClassPure: {"getpid", "getppid", "gettid", "getpgrp", "getuid", "geteuid", "getgid",
		"getegid"},
}

// fdReturners return a new descriptor without taking one (for %desc).
var fdReturners = set("open", "creat", "openat", "openat2", "socket", "socketpair", "pipe",
	"pipe2", "epoll_create", "epoll_create1", "eventfd", "eventfd2", "inotify_init",
	"inotify_init1", "signalfd", "timerfd_create", "memfd_create", "memfd_secret",
	"fanotify_init", "perf_event_open", "userfaultfd", "pidfd_open", "io_uring_setup",
	"bpf", "fsopen", "open_tree", "fspick", "mq_open", "landlock_create_ruleset",
	"select", "pselect6", "poll", "ppoll", "mmap", "open_by_handle_at")

var classOf = func() map[string]Class {
	m := map[string]Class{}
	for c, names := range classLists {
		for _, n := range names {
			m[n] |= c
		}
	}
	return m
}()

// classesOf: the hand lists, plus %desc for any call with a descriptor
// argument (fd, dirfd) or returning one, plus %file for any call with a
// path argument.
func classesOf(in *Info) Class {
	c := classOf[in.Name]
	if fdReturners[in.Name] {
		c |= ClassDesc
	}
	for _, a := range in.Args {
		switch a.Kind {
		case KindFd, KindDirFd:
			if in.Name != "mmap" || a.Name == "fd" {
				c |= ClassDesc
			}
		case KindPath:
			c |= ClassFile
		}
	}
	return c
}
