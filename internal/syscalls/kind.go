//go:build linux && amd64

package syscalls

// Kinds. Scalars are shown from the register alone; the rest need a
// Capture (see captureFor) and fall back to the address when it is
// missing or the call failed, as strace does.
const (
	KindUint        Kind = iota // unsigned decimal
	KindInt                     // signed decimal (int-sized unless KindLong)
	KindLong                    // signed decimal, 64-bit
	KindHex                     // 0x...
	KindPtr                     // NULL or 0x...
	KindFd                      // fd, with -y its path
	KindDirFd                   // fd or AT_FDCWD
	KindPath                    // NUL-terminated path (not cut at -s)
	KindStr                     // NUL-terminated string (cut at -s)
	KindInBuf                   // bytes, length in the next argument
	KindOutBuf                  // bytes written by the kernel, length = return value
	KindOutBufHex               // like KindOutBuf, always hex-escaped (getrandom)
	KindOpenFlags               // O_RDONLY|O_CLOEXEC
	KindMode                    // octal mode_t (0644)
	KindOpenMode                // octal, shown only with O_CREAT/O_TMPFILE
	KindAccessMode              // F_OK, R_OK|W_OK
	KindAtFlags                 // AT_EMPTY_PATH|...
	KindProt                    // PROT_READ|...
	KindMapFlags                // MAP_PRIVATE|...
	KindMadvise                 // MADV_DONTNEED
	KindCloneFlags              // CLONE_...|SIGCHLD
	KindSignal                  // SIGINT
	KindSigHow                  // SIG_BLOCK
	KindSigset                  // [INT TERM]
	KindFcntlCmd                // F_GETFL (argument 3 decoded by command)
	KindIoctlReq                // TCGETS (argument 3 decoded by request)
	KindSockDomain              // AF_UNIX
	KindSockType                // SOCK_STREAM|SOCK_CLOEXEC
	KindSockProto               // IPPROTO_TCP (by domain)
	KindWhence                  // SEEK_SET
	KindWaitOpts                // WNOHANG|...
	KindPrctlOp                 // PR_SET_NAME
	KindArchPrctlOp             // ARCH_SET_FS
	KindFutexOp                 // FUTEX_WAIT_PRIVATE
	KindStatxMask               // STATX_BASIC_STATS
	KindGrndFlags               // GRND_NONBLOCK
	KindFdFlags                 // O_CLOEXEC|O_NONBLOCK (pipe2, dup3, inotify_init1...)
	KindEfdFlags                // EFD_CLOEXEC
	KindEpollOp                 // EPOLL_CTL_ADD
	KindEpollFlags              // EPOLL_CLOEXEC
	KindPollEvents              // POLLIN
	KindClockID                 // CLOCK_MONOTONIC
	KindRlimitRes               // RLIMIT_NOFILE
	KindSockLevel               // SOL_SOCKET
	KindMsgFlags                // MSG_NOSIGNAL
	KindRenameFlags             // RENAME_NOREPLACE
	KindTimerFlags              // TIMER_ABSTIME
	KindUmask                   // octal
	KindIntPtr                  // [42]: pointer to an int
	KindPollFds                 // [{fd=3, events=POLLIN}]
	KindStat                    // struct stat
	KindStatx                   // struct statx
	KindTimespec                // {tv_sec=0, tv_nsec=0}
	KindTimeval                 // {tv_sec=0, tv_usec=0}
	KindSigaction               // struct sigaction
	KindIovec                   // [{iov_base="..", iov_len=2}]
	KindSockaddr                // {sa_family=AF_INET, ...}
	KindPipeFds                 // [3, 4]
	KindRlimit                  // {rlim_cur=..., rlim_max=...}
	KindUtsname                 // {sysname="Linux", nodename="vm", ...}
	KindSysinfo                 // struct sysinfo
	KindDirents                 // 0x... /* N entries */
	KindFdSet                   // [0 6]
	KindWaitStatus              // [{WIFEXITED(s) && WEXITSTATUS(s) == 0}]
	KindArgv                    // ["ls", "-la"]
	KindEnvp                    // 0x7ffd... /* 25 vars */
	KindClone3                  // struct clone_args
	KindEpollEvent              // {events=EPOLLIN, data={u32=6, u64=6}}
	KindEpollEvents             // output array of epoll_event, count = return value
	KindSockLen                 // socklen_t *: [16]
	KindRusage                  // struct rusage (shown abbreviated)
	KindTimespecOut             // timespec written by the kernel
	KindFadvise                 // POSIX_FADV_SEQUENTIAL
	KindCPUSet                  // [0 1]: a CPU mask the kernel wrote, its length the return value
	KindNone                    // not shown (preadv's pos_h)
	KindXlat                    // flags or enum by argXlats (per call and argument)
	KindStatfs                  // struct statfs
	KindItimerval               // {it_interval={tv_sec=0, tv_usec=0}, it_value=...}
	KindItimerspec              // {it_interval={tv_sec=0, tv_nsec=0}, it_value=...}
	KindUtimes                  // utimensat's [{tv_sec=1, tv_nsec=2} /* date */, UTIME_NOW]
	KindSiginfo                 // waitid's siginfo_t: {si_signo=SIGCHLD, ...}
	KindGids                    // [0, 4]: gid_t array, its length the return (getgroups) or argument 0
	KindStackT                  // {ss_sp=NULL, ss_flags=SS_DISABLE, ss_size=0}
	KindOpenHow                 // {flags=O_RDONLY, resolve=RESOLVE_NO_SYMLINKS}
	KindInt64Ptr                // [0]: pointer to a 64-bit offset (copy_file_range)
	KindMincore                 // [1, 0, 1]: one byte per page of argument 1's length
	KindSigevent                // {sigev_signo=SIGALRM, sigev_notify=SIGEV_SIGNAL}
	KindMsghdr                  // {msg_name=NULL, msg_namelen=0, msg_iov=[...], ..., msg_flags=0}
	KindPselectSig              // pselect6's {sigmask=[USR1], sigsetsize=8}: a sigset's address and size
	nKinds
)
