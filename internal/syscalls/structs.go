//go:build linux && amd64

package syscalls

import (
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// structSize is the bytes a kind's decoder needs (0: any).
var structSize = map[Kind]int{
	KindStat: sizeStat, KindStatx: 0x90, KindTimespec: 16, KindTimespecOut: 16, KindTimeval: 16,
	KindSigaction: sizeSigact, KindSigset: 8, KindPipeFds: 8, KindRlimit: sizeRlimit,
	KindUtsname: sizeUtsname, KindSysinfo: sizeSysinfo, KindWaitStatus: 4, KindIntPtr: 4,
	KindClone3: 64, KindEpollEvent: sizeEpollEv, KindRusage: 32, KindSockLen: 4, KindFdSet: 1,
	KindPselectSig: 16,
}

// positiveOut: calls whose outputs the kernel writes only when they
// return more than 0 (wait4 with WNOHANG and no child changed: 0).
var positiveOut = set("wait4")

// structArg shows pointer argument a of kind k from its capture, or its
// address as strace does when there is nothing to show (NULL aside).
func (x *ctx) structArg(a int, k Kind, out bool) string {
	v := x.arg(a)
	if v == 0 {
		return "NULL"
	}
	switch k {
	case KindEnvp:
		b := x.data(a, false)
		if b == nil {
			return hex(v)
		}
		if x.o.Full && !x.in.Captures[x.in.capture(a, false)].CountOnly {
			return x.argvStr(b)
		}
		if n := len(splitStrArray(b)); n != 1 {
			return fmt.Sprintf("%s /* %d vars */", hex(v), n)
		}
		return hex(v) + " /* 1 var */"
	case KindCPUSet:
		b := x.data(a, true)
		if x.failed() || b == nil {
			return hex(v)
		}
		var cpus []string
		for i, c := range b {
			for bit := 0; bit < 8; bit++ {
				if c&(1<<bit) != 0 {
					cpus = append(cpus, strconv.Itoa(8*i+bit))
				}
			}
		}
		return "[" + strings.Join(cpus, " ") + "]"
	case KindDirents:
		if x.failed() {
			return hex(v)
		}
		if b := x.data(a, true); x.o.Full && (b != nil || x.c.Ret == 0) {
			if s := direntsFull(quoter(x.o.Hex), b); s != "" {
				return s
			}
		}
		return fmt.Sprintf("%s /* %d entries */", hex(v), countDirents(x.data(a, true)))
	}
	if out && k == KindSockLen && x.failed() {
		// strace shows the length given, read at entry.
		if in := x.data(a, false); len(in) >= 4 {
			return fmt.Sprintf("[%d]", le.Uint32(in))
		}
	}
	if out && k == KindIovec && x.failed() {
		// strace shows the elements, their bases as addresses: nothing
		// was read into them.
		if b := x.data(a, true); len(b) >= 24 {
			return x.iovStr(b, out)
		}
	}
	if out && (x.failed() || positiveOut[x.in.Name] && x.c.Ret == 0) {
		return hex(v)
	}
	b := x.data(a, out)
	if b == nil || len(b) < structSize[k] || len(b) < moreStructs[k] {
		return hex(v)
	}
	if s := x.structMore(a, k, b); s != "" {
		return s
	}
	if x.o.Full {
		if s := x.structFull(k, b); s != "" {
			return s
		}
	}
	switch k {
	case KindStat:
		return statStr(b)
	case KindStatx:
		return statxStr(b)
	case KindTimespec, KindTimespecOut:
		return fmt.Sprintf("{tv_sec=%d, tv_nsec=%d}", int64(le.Uint64(b)), int64(le.Uint64(b[8:])))
	case KindTimeval:
		return fmt.Sprintf("{tv_sec=%d, tv_usec=%d}", int64(le.Uint64(b)), int64(le.Uint64(b[8:])))
	case KindSigaction:
		return sigactionStr(b)
	case KindSigset:
		return sigsetStr(le.Uint64(b))
	case KindPselectSig:
		mask := ptr(le.Uint64(b))
		if set := x.indirect(a, 0, false); le.Uint64(b) != 0 && len(set) >= sizeSigset {
			mask = sigsetStr(le.Uint64(set))
		}
		return fmt.Sprintf("{sigmask=%s, sigsetsize=%d}", mask, le.Uint64(b[8:]))
	case KindPipeFds:
		return fmt.Sprintf("[%s, %s]", x.fd(uint64(le.Uint32(b))), x.fd(uint64(le.Uint32(b[4:]))))
	case KindRlimit:
		return "{rlim_cur=" + rlimStr(le.Uint64(b)) + ", rlim_max=" + rlimStr(le.Uint64(b[8:])) + "}"
	case KindUtsname:
		return fmt.Sprintf("{sysname=%s, nodename=%s, ...}", quoter(x.o.Hex).quote(b[:65], 65, true, false), quoter(x.o.Hex).quote(b[65:130], 65, true, false))
	case KindSysinfo:
		return sysinfoStr(b)
	case KindWaitStatus:
		return waitStatusStr(le.Uint32(b))
	case KindIntPtr:
		return "[" + strconv.Itoa(int(int32(le.Uint32(b)))) + "]"
	case KindSockLen:
		in := x.data(a, false)
		if out && len(in) >= 4 && le.Uint32(in) != le.Uint32(b) {
			return fmt.Sprintf("[%d => %d]", le.Uint32(in), le.Uint32(b))
		}
		return fmt.Sprintf("[%d]", le.Uint32(b))
	case KindFdSet:
		return fdSetStr(b, int(int32(x.arg(0))))
	case KindArgv:
		return x.argvStr(b)
	case KindIovec:
		return x.iovStr(b, out)
	case KindMsghdr:
		if s := x.msghdrStr(b, out); s != "" {
			return s
		}
	case KindSockaddr:
		return x.sockaddrArg(a, b, out)
	case KindPollFds:
		return pollFdsStr(b, int(uint32(x.arg(a+1))), false, x.strsize)
	case KindEpollEvent:
		return epollEventStr(b)
	case KindEpollEvents:
		return epollEventsStr(b, int(x.c.Ret), x.strsize)
	case KindClone3:
		return clone3Str(b)
	case KindRusage:
		return fmt.Sprintf("{ru_utime={tv_sec=%d, tv_usec=%d}, ru_stime={tv_sec=%d, tv_usec=%d}, ...}",
			int64(le.Uint64(b)), int64(le.Uint64(b[8:])), int64(le.Uint64(b[16:])), int64(le.Uint64(b[24:])))
	}
	return hex(v)
}

// makedev is strace's st_rdev form.
func makedev(dev uint64) string {
	return "makedev(" + hex(uint64(unix.Major(dev))) + ", " + hex(uint64(unix.Minor(dev))) + ")"
}

// statStr is strace's abbreviated struct stat.
func statStr(b []byte) string {
	mode := uint64(le.Uint32(b[24:]))
	s := "{st_mode=" + modeStr(mode)
	if t := mode & unix.S_IFMT; t == unix.S_IFCHR || t == unix.S_IFBLK {
		s += ", st_rdev=" + makedev(le.Uint64(b[40:]))
	} else {
		s += ", st_size=" + strconv.FormatInt(int64(le.Uint64(b[48:])), 10)
	}
	return s + ", ...}"
}

// statxStr is strace's abbreviated struct statx.
func statxStr(b []byte) string {
	return fmt.Sprintf("{stx_mask=%s, stx_attributes=%s, stx_mode=%s, stx_size=%d, ...}",
		statxMask.flags(uint64(le.Uint32(b))), statxAttrs.flags(le.Uint64(b[8:])),
		modeStr(uint64(le.Uint16(b[28:]))), le.Uint64(b[40:]))
}

// sa_flags (asm/signal.h); x/sys/unix does not define them.
var saFlags = xlat{
	{saRestorer, "SA_RESTORER"}, {0x08000000, "SA_ONSTACK"}, {0x10000000, "SA_RESTART"},
	{0x40000000, "SA_NODEFER"}, {0x80000000, "SA_RESETHAND"}, {4, "SA_SIGINFO"},
	{1, "SA_NOCLDSTOP"}, {2, "SA_NOCLDWAIT"},
}

const saRestorer = 0x04000000

// sigactionStr decodes the kernel's struct sigaction (handler, flags,
// restorer, mask).
func sigactionStr(b []byte) string {
	h := le.Uint64(b)
	fl := le.Uint64(b[8:])
	hs := hex(h)
	switch h {
	case 0:
		hs = "SIG_DFL"
	case 1:
		hs = "SIG_IGN"
	}
	s := fmt.Sprintf("{sa_handler=%s, sa_mask=%s, sa_flags=%s", hs, sigsetStr(le.Uint64(b[24:])), saFlags.flags(fl))
	if fl&saRestorer != 0 {
		s += ", sa_restorer=" + ptr(le.Uint64(b[16:]))
	}
	return s + "}"
}

// rlimStr: strace shows multiples of 1024 as N*1024.
func rlimStr(v uint64) string {
	switch {
	case v == ^uint64(0):
		return "RLIM64_INFINITY"
	case v > 0 && v%1024 == 0:
		return strconv.FormatUint(v/1024, 10) + "*1024"
	}
	return strconv.FormatUint(v, 10)
}

func sysinfoStr(b []byte) string {
	u := func(off int) uint64 { return le.Uint64(b[off:]) }
	return fmt.Sprintf("{uptime=%d, loads=[%d, %d, %d], totalram=%d, freeram=%d, sharedram=%d, "+
		"bufferram=%d, totalswap=%d, freeswap=%d, procs=%d, totalhigh=%d, freehigh=%d, mem_unit=%d}",
		int64(u(0)), u(8), u(16), u(24), u(32), u(40), u(48), u(56), u(64), u(72),
		le.Uint16(b[80:]), u(88), u(96), le.Uint32(b[104:]))
}

// countDirents counts the linux_dirent(64) records in b.
func countDirents(b []byte) int {
	n := 0
	for off := 0; off+18 <= len(b); n++ {
		rl := int(le.Uint16(b[off+16:]))
		if rl == 0 {
			break
		}
		off += rl
	}
	return n
}

// fdSetStr lists the descriptors set among the first n: [0 6].
func fdSetStr(b []byte, n int) string {
	var fds []string
	for i := 0; i < n && i/8 < len(b); i++ {
		if b[i/8]&(1<<(i%8)) != 0 {
			fds = append(fds, strconv.Itoa(i))
		}
	}
	return "[" + strings.Join(fds, " ") + "]"
}

// splitStrArray splits a StrArray capture; the bool is whether the
// array's end was seen.
func splitStrArray(b []byte) []string {
	ss, _ := splitStrArrayEnd(b)
	return ss
}

func splitStrArrayEnd(b []byte) ([]string, bool) {
	var ss []string
	for len(b) > 0 {
		i := indexNUL(b)
		if i < 0 {
			return append(ss, string(b)), false
		}
		if i == 0 && len(b) == 1 {
			return ss, true // the final extra NUL
		}
		ss = append(ss, string(b[:i]))
		b = b[i+1:]
	}
	return ss, false
}

func (x *ctx) argvStr(b []byte) string {
	ss, end := splitStrArrayEnd(b)
	parts := make([]string, 0, len(ss)+1)
	for _, s := range ss {
		parts = append(parts, quoter(x.o.Hex).quote([]byte(s), x.strsize, false, false))
	}
	if !end {
		parts = append(parts, "...")
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
