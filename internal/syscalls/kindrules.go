//go:build linux && amd64

package syscalls

import "strings"

// Argument kinds come from the tracepoint's name and C type (kindOf's
// rules), then argKinds overrides per call, by argument index.

var fdNames = set("fd", "oldfd", "newfd", "epfd", "out_fd", "in_fd", "fd_in", "fd_out", "ufd", "fildes")
var dirfdNames = set("dfd", "olddfd", "newdfd", "dirfd", "from_dfd", "to_dfd")
var pathNames = set("filename", "pathname", "path", "oldname", "newname", "specialfile",
	"library", "dir_name", "dev_name", "new_root", "put_old")
var addrNames = set("addr", "start", "brk", "new_addr", "umod")

func set(s ...string) map[string]bool {
	m := make(map[string]bool, len(s))
	for _, v := range s {
		m[v] = true
	}
	return m
}

func kindOf(a rawArg) Kind {
	t := a.CType
	switch {
	case strings.Contains(t, "*"):
		if strings.Contains(t, "char") && pathNames[a.Name] {
			return KindPath
		}
		if t == "const char *" {
			return KindStr
		}
		return KindPtr
	case fdNames[a.Name]:
		return KindFd
	case dirfdNames[a.Name]:
		return KindDirFd
	case t == "umode_t" || t == "mode_t":
		return KindMode
	case t == "clockid_t" || t == "const clockid_t":
		return KindClockID
	case t == "long" || t == "off_t" || t == "loff_t":
		return KindLong
	case t == "int" || t == "pid_t" || t == "key_t" || t == "timer_t" || t == "mqd_t" ||
		t == "s32" || t == "__s32" || t == "qid_t":
		return KindInt
	case addrNames[a.Name]:
		return KindPtr
	}
	return KindUint
}

// argKinds overrides kindOf for what the type alone cannot tell.
var argKinds = map[string]map[int]Kind{
	"read":              {1: KindOutBuf},
	"pread64":           {1: KindOutBuf},
	"write":             {1: KindInBuf},
	"pwrite64":          {1: KindInBuf},
	"readv":             {1: KindIovec},
	"writev":            {1: KindIovec},
	"preadv":            {1: KindIovec, 3: KindLong, 4: KindNone},
	"pwritev":           {1: KindIovec, 3: KindLong, 4: KindNone},
	"preadv2":           {1: KindIovec, 3: KindLong, 4: KindNone},
	"pwritev2":          {1: KindIovec, 3: KindLong, 4: KindNone},
	"open":              {1: KindOpenFlags, 2: KindOpenMode},
	"openat":            {2: KindOpenFlags, 3: KindOpenMode},
	"stat":              {1: KindStat},
	"lstat":             {1: KindStat},
	"fstat":             {1: KindStat},
	"newfstatat":        {2: KindStat, 3: KindAtFlags},
	"statx":             {2: KindAtFlags, 3: KindStatxMask, 4: KindStatx},
	"poll":              {0: KindPollFds},
	"ppoll":             {0: KindPollFds, 2: KindTimespec, 3: KindSigset},
	"lseek":             {2: KindWhence},
	"fadvise64":         {3: KindFadvise},
	"sched_getaffinity": {2: KindCPUSet},
	"mmap":              {2: KindProt, 3: KindMapFlags, 4: KindFd, 5: KindHex},
	"mprotect":          {2: KindProt},
	"pkey_mprotect":     {0: KindPtr, 2: KindProt},
	"madvise":           {2: KindMadvise},
	"mremap":            {4: KindPtr},
	"rt_sigaction":      {0: KindSignal, 1: KindSigaction, 2: KindSigaction},
	"rt_sigprocmask":    {0: KindSigHow, 1: KindSigset, 2: KindSigset},
	"rt_sigsuspend":     {0: KindSigset},
	"rt_sigpending":     {0: KindSigset},
	"ioctl":             {1: KindIoctlReq, 2: KindHex},
	"access":            {1: KindAccessMode},
	"faccessat":         {2: KindAccessMode},
	"faccessat2":        {2: KindAccessMode, 3: KindAtFlags},
	"pipe":              {0: KindPipeFds},
	"pipe2":             {0: KindPipeFds, 1: KindFdFlags},
	"select":            {1: KindFdSet, 2: KindFdSet, 3: KindFdSet, 4: KindTimeval},
	"pselect6":          {1: KindFdSet, 2: KindFdSet, 3: KindFdSet, 4: KindTimespec, 5: KindPselectSig},
	"dup3":              {2: KindFdFlags},
	"nanosleep":         {0: KindTimespec, 1: KindTimespecOut},
	"clock_nanosleep":   {1: KindTimerFlags, 2: KindTimespec, 3: KindTimespecOut},
	"clock_gettime":     {1: KindTimespecOut},
	"clock_getres":      {1: KindTimespecOut},
	"socket":            {0: KindSockDomain, 1: KindSockType, 2: KindSockProto},
	"socketpair":        {0: KindSockDomain, 1: KindSockType, 2: KindSockProto, 3: KindPipeFds},
	"connect":           {1: KindSockaddr},
	"bind":              {1: KindSockaddr},
	"accept":            {1: KindSockaddr, 2: KindSockLen},
	"accept4":           {1: KindSockaddr, 2: KindSockLen, 3: KindSockType},
	"getsockname":       {1: KindSockaddr, 2: KindSockLen},
	"getpeername":       {1: KindSockaddr, 2: KindSockLen},
	"sendto":            {1: KindInBuf, 3: KindMsgFlags, 4: KindSockaddr},
	"recvfrom":          {1: KindOutBuf, 3: KindMsgFlags, 4: KindSockaddr, 5: KindSockLen},
	"sendmsg":           {1: KindMsghdr, 2: KindMsgFlags},
	"recvmsg":           {1: KindMsghdr, 2: KindMsgFlags},
	"setsockopt":        {1: KindSockLevel, 3: KindIntPtr},
	"getsockopt":        {1: KindSockLevel, 3: KindIntPtr, 4: KindSockLen},
	"clone3":            {0: KindClone3},
	"execve":            {1: KindArgv, 2: KindEnvp},
	"execveat":          {2: KindArgv, 3: KindEnvp, 4: KindAtFlags},
	"wait4":             {1: KindWaitStatus, 2: KindWaitOpts, 3: KindRusage},
	"kill":              {1: KindSignal},
	"tkill":             {1: KindSignal},
	"tgkill":            {2: KindSignal},
	"uname":             {0: KindUtsname},
	"sysinfo":           {0: KindSysinfo},
	"fcntl":             {1: KindFcntlCmd, 2: KindHex},
	"getdents":          {1: KindDirents},
	"getdents64":        {1: KindDirents},
	"getcwd":            {0: KindOutBuf},
	"readlink":          {1: KindOutBuf},
	"readlinkat":        {2: KindOutBuf},
	"umask":             {0: KindUmask},
	"unlinkat":          {2: KindAtFlags},
	"linkat":            {4: KindAtFlags},
	"fchownat":          {4: KindAtFlags},
	"utimensat":         {2: KindUtimes, 3: KindAtFlags},
	"renameat2":         {4: KindRenameFlags},
	"getrandom":         {0: KindOutBufHex, 2: KindGrndFlags},
	"eventfd2":          {1: KindEfdFlags},
	"epoll_create1":     {0: KindEpollFlags},
	"epoll_ctl":         {1: KindEpollOp, 3: KindEpollEvent},
	"epoll_wait":        {1: KindEpollEvents},
	"epoll_pwait":       {1: KindEpollEvents, 4: KindSigset},
	"prctl":             {0: KindPrctlOp, 1: KindHex, 2: KindHex, 3: KindHex, 4: KindHex},
	"arch_prctl":        {0: KindArchPrctlOp, 1: KindPtr},
	"futex":             {1: KindFutexOp, 3: KindTimespec},
	"set_tid_address":   {0: KindPtr},
	"set_robust_list":   {0: KindPtr},
	"rseq":              {0: KindPtr, 1: KindHex, 3: KindHex},
	"prlimit64":         {0: KindInt, 1: KindRlimitRes, 2: KindRlimit, 3: KindRlimit},
	"getrlimit":         {0: KindRlimitRes, 1: KindRlimit},
	"setrlimit":         {0: KindRlimitRes, 1: KindRlimit},
	"inotify_init1":     {0: KindFdFlags},
	"alarm":             {0: KindUint},
	"mkdir":             {1: KindMode},
	"timerfd_create":    {0: KindClockID},
	"timerfd_settime":   {2: KindItimerspec, 3: KindItimerspec},
	"timerfd_gettime":   {1: KindItimerspec},
	"timer_settime":     {1: KindTimerFlags, 2: KindItimerspec, 3: KindItimerspec},
	"timer_gettime":     {1: KindItimerspec},
	"timer_create":      {1: KindSigevent, 2: KindIntPtr},
	"getitimer":         {1: KindItimerval},
	"setitimer":         {1: KindItimerval, 2: KindItimerval},
	"statfs":            {1: KindStatfs},
	"fstatfs":           {1: KindStatfs},
	"getrusage":         {1: KindRusage},
	"waitid":            {2: KindSiginfo, 4: KindRusage},
	"getgroups":         {1: KindGids},
	"setgroups":         {1: KindGids},
	"getresuid":         {0: KindIntPtr, 1: KindIntPtr, 2: KindIntPtr},
	"getresgid":         {0: KindIntPtr, 1: KindIntPtr, 2: KindIntPtr},
	"sched_getparam":    {1: KindIntPtr},
	"sched_setparam":    {1: KindIntPtr},
	"mincore":           {2: KindMincore},
	"copy_file_range":   {1: KindInt64Ptr, 3: KindInt64Ptr},
	"splice":            {1: KindInt64Ptr, 3: KindInt64Ptr},
	"tee":               {0: KindFd, 1: KindFd},
	"sigaltstack":       {0: KindStackT, 1: KindStackT},
	"signalfd":          {1: KindSigset},
	"signalfd4":         {1: KindSigset},
	"openat2":           {2: KindOpenHow},
	"fchmod":            {1: KindMode},
	"chmod":             {1: KindMode},
}

// outArgs are the arguments the kernel writes: read at exit.
var outArgs = map[string][]int{
	"read": {1}, "pread64": {1}, "readv": {1}, "preadv": {1}, "preadv2": {1},
	"stat": {1}, "lstat": {1}, "fstat": {1}, "newfstatat": {2}, "statx": {4},
	"poll": {0}, "ppoll": {0}, "rt_sigaction": {2}, "rt_sigprocmask": {2}, "rt_sigpending": {0},
	"pipe": {0}, "pipe2": {0}, "socketpair": {3}, "nanosleep": {1}, "clock_nanosleep": {3},
	"clock_gettime": {1}, "clock_getres": {1}, "accept": {1, 2}, "accept4": {1, 2},
	"getsockname": {1, 2}, "getpeername": {1, 2}, "recvfrom": {1, 4, 5}, "recvmsg": {1}, "getsockopt": {3, 4},
	"wait4": {1, 3}, "uname": {0}, "sysinfo": {0}, "sched_getaffinity": {2}, "getdents": {1}, "getdents64": {1},
	"getcwd": {0}, "readlink": {1}, "readlinkat": {2}, "getrandom": {0}, "epoll_wait": {1},
	"epoll_pwait": {1}, "prlimit64": {3}, "getrlimit": {1},
	"timerfd_settime": {3}, "timerfd_gettime": {1}, "timer_settime": {3}, "timer_gettime": {1}, "timer_create": {2},
	"getitimer": {1}, "setitimer": {2}, "statfs": {1}, "fstatfs": {1}, "getrusage": {1},
	"waitid": {2, 4}, "getgroups": {1}, "getresuid": {0, 1, 2}, "getresgid": {0, 1, 2},
	"sched_getparam": {1}, "mincore": {2}, "sigaltstack": {1},
}
