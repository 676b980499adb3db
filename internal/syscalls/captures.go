//go:build linux && amd64

package syscalls

// Sizes of the structs decoded (linux/amd64 kernel ABI).
const (
	sizeStat     = 144
	sizeStatx    = 256
	sizeTimespec = 16
	sizeSigact   = 32 // kernel's struct sigaction: handler, flags, restorer, mask
	sizeSigset   = 8
	sizeRlimit   = 16
	sizeUtsname  = 6 * 65
	sizeSysinfo  = 112
	sizeFdSet    = 128
	sizeRusage   = 144
	sizeClone3   = 88
	sizeEpollEv  = 12 // packed on x86_64
	sizeSockaddr = 128
	sizeIoctlArg = 64 // covers the ioctl structs decoded (winsize, int)
	sizeStatfs   = 120
	sizeItimer   = 32 // itimerval and itimerspec: two 16-byte times
	sizeSiginfo  = 128
	sizeStackT   = 24
	sizeOpenHow  = 24
	sizeSigevent = 32 // the fields strace shows: value, signo, notify, the union's first 16 bytes
	// maxGids caps a group list: strace shows at most -s elements anyway.
	maxGids = 1024

	// MaxIovElems caps the iovec elements an Iov capture holds.
	MaxIovElems = 64
	// maxArray caps arrays of elements and execve's strings.
	maxArray = 4096
	// maxPollFds caps poll's fds: its array is read once in-process, for
	// the arguments and for revents (the kernel writes only revents),
	// and fits a record of a system call pad (pad.SysSpace) so, with
	// ppoll's timeout and mask.
	maxPollFds = 2028
	// maxEpollEvents caps epoll_wait's events: strace shows -s of them
	// (32 by default), and 1,024 fit a system call pad's record.
	maxEpollEvents = 1024
	// maxEnv caps envp's capture: only its count is shown, but an
	// engine that reads the strings needs room for a usual environment.
	maxEnv = 1 << 15
)

// capturesFor derives a call's captures from its argument kinds.
func capturesFor(in *Info) []Capture {
	var cs []Capture
	add := func(c Capture) { cs = append(cs, c) }
	for a, arg := range in.Args {
		exit := in.isOut(a)
		c := Capture{Arg: a, Exit: exit, LenArg: -1}
		switch arg.Kind {
		case KindPath:
			c.Str, c.Max = true, pathMax
		case KindStr:
			c.Str = true
		case KindInBuf:
			c.LenArg = a + 1
		case KindOutBuf, KindOutBufHex:
			c.LenRet = true
			if in.Name == "getcwd" {
				c.Max = pathMax
			}
		case KindStat:
			c.Size = sizeStat
		case KindStatx:
			c.Size = sizeStatx
		case KindTimespec, KindTimespecOut, KindTimeval:
			c.Size = sizeTimespec
		case KindSigaction:
			c.Size = sizeSigact
		case KindSigset:
			c.Size = sizeSigset
		case KindPselectSig:
			// The struct, then the sigset its first word points to.
			c.Size = 16
			add(c)
			c = Capture{Arg: a, LenArg: -1, Size: sizeSigset, Indirect: true}
		case KindRlimit:
			c.Size = sizeRlimit
		case KindUtsname:
			c.Size = sizeUtsname
		case KindSysinfo:
			c.Size = sizeSysinfo
		case KindPipeFds:
			c.Size = 8
		case KindSockLen:
			c.Size = 4
			if exit {
				add(Capture{Arg: a, LenArg: -1, Size: 4}) // [in => out]
			}
		case KindIntPtr, KindWaitStatus:
			c.Size = 4
		case KindFdSet:
			c.Size = sizeFdSet
			add(c)
			c.Exit = true // the result shows the sets left
		case KindRusage:
			c.Size = sizeRusage
		case KindClone3:
			c.Size = sizeClone3
		case KindEpollEvent:
			c.Size = sizeEpollEv
		case KindEpollEvents:
			c.LenRet, c.Elem, c.Max = true, sizeEpollEv, maxEpollEvents*sizeEpollEv
		case KindPollFds:
			c.LenArg, c.Elem, c.Max = a+1, 8, maxPollFds*8
			add(c)
			c.Exit = true // revents, for the result
		case KindSockaddr:
			if exit {
				c.Size = sizeSockaddr
			} else {
				c.LenArg, c.Max = a+1, sizeSockaddr
			}
		case KindStatfs:
			c.Size = sizeStatfs
		case KindItimerval, KindItimerspec, KindUtimes:
			c.Size = sizeItimer
		case KindSiginfo:
			c.Size = sizeSiginfo
		case KindStackT:
			c.Size = sizeStackT
		case KindOpenHow:
			c.Size = sizeOpenHow
		case KindSigevent:
			c.Size = sizeSigevent
		case KindInt64Ptr:
			c.Size = 8
		case KindGids:
			c.Elem, c.Max = 4, maxGids*4
			if exit {
				c.LenRet = true
			} else {
				c.LenArg = 0
			}
		case KindMincore:
			// One byte per page of the length: at most -s+1 bytes are
			// read (strace shows -s elements), from where the vector starts.
			c.LenArg = 1
		case KindCPUSet:
			c.LenRet, c.Max = true, 128
		case KindDirents:
			c.LenRet, c.Max, c.Counted = true, 1<<16, true
		case KindArgv:
			c.StrArray, c.Max = true, maxArray
		case KindEnvp:
			c.StrArray, c.CountOnly, c.Max = true, true, maxEnv
		case KindIovec:
			c.Iov, c.LenArg = true, a+1
			c.LenRet = exit
		case KindMsghdr:
			c.Msg, c.LenRet = true, exit
		default:
			continue
		}
		add(c)
	}
	switch in.Name {
	case "ioctl":
		// Which requests read or write the argument is decided at
		// display time; both sides are captured.
		add(Capture{Arg: 2, LenArg: -1, Size: sizeIoctlArg})
		add(Capture{Arg: 2, LenArg: -1, Size: sizeIoctlArg, Exit: true})
	case "clone":
		// parent_tid=[N] when CLONE_PARENT_SETTID.
		add(Capture{Arg: 2, LenArg: -1, Size: 4, Exit: true})
	case "clone3":
		// => {pidfd=[N], parent_tid=[N]}: the ints clone_args point to.
		add(Capture{Arg: 0, LenArg: -1, Size: 4, Exit: true, Indirect: true, Off: clone3PidFD})
		add(Capture{Arg: 0, LenArg: -1, Size: 4, Exit: true, Indirect: true, Off: clone3ParentTID})
	case "prctl":
		add(Capture{Arg: 1, LenArg: -1, Str: true, Max: 16})   // PR_SET_NAME
		add(Capture{Arg: 1, LenArg: -1, Size: 16, Exit: true}) // PR_GET_NAME, [int]s
	case "rt_sigreturn":
		// After the handler's ret popped the frame's return address, the
		// stack pointer is at its ucontext: uc_flags, uc_link, uc_stack
		// (24 bytes), then the 256-byte sigcontext (rax at 104) and
		// uc_sigmask. Both are read: the mask shows, rax is what the call
		// returns (SigreturnRet).
		add(Capture{SP: true, Off: sigframeRegs, Size: 256 + 8, LenArg: -1})
	case "arch_prctl":
		add(Capture{Arg: 1, LenArg: -1, Size: 8, Exit: true}) // ARCH_GET_FS
	case "select", "pselect6":
		add(Capture{Arg: 4, LenArg: -1, Size: sizeTimespec, Exit: true}) // the time left
	case "ppoll":
		add(Capture{Arg: 2, LenArg: -1, Size: sizeTimespec, Exit: true}) // the time left
	case "fcntl":
		add(Capture{Arg: 2, LenArg: -1, Size: 32}) // struct flock, for F_SETLK & co.
	}
	return cs
}

// MaxFor returns how many bytes an engine should read for c given the
// string limit (-s): strings strsize+1 so truncation is known (paths,
// which strace never cuts, their Max); buffers (LenArg/LenRet bytes) at
// most strsize+1; element arrays and string arrays (all strings joined)
// their Max; Iov captures, the bytes per element; structs their Size.
func MaxFor(c Capture, strsize int) int {
	switch {
	case c.Max > 0 && !c.Iov:
		return c.Max
	case c.Size > 0:
		return c.Size
	}
	return strsize + 1
}
