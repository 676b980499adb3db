//go:build linux && amd64

package syscalls

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// localZone is the zone of the dates strace adds to utimensat's times
// (its localtime); a variable so tests can fix it.
var localZone = time.Local

// moreStructs are the minimum bytes of the kinds structMore decodes.
var moreStructs = map[Kind]int{
	KindStatfs: sizeStatfs, KindItimerval: sizeItimer, KindItimerspec: sizeItimer,
	KindUtimes: sizeItimer, KindSiginfo: 32, KindStackT: sizeStackT, KindInt64Ptr: 8,
	KindSigevent: sizeSigevent,
}

// structMore shows the kinds of this file from their bytes b; "" when
// it has none of them.
func (x *ctx) structMore(a int, k Kind, b []byte) string {
	switch k {
	case KindStatfs:
		return statfsStr(b)
	case KindItimerval:
		return itimerStr(b, "tv_usec")
	case KindItimerspec:
		return itimerStr(b, "tv_nsec")
	case KindUtimes:
		return "[" + utimeStr(b) + ", " + utimeStr(b[16:]) + "]"
	case KindSiginfo:
		return siginfoStr(b)
	case KindStackT:
		return fmt.Sprintf("{ss_sp=%s, ss_flags=%s, ss_size=%d}", ptr(le.Uint64(b)),
			ssFlags.flags(uint64(le.Uint32(b[8:]))), le.Uint64(b[16:]))
	case KindInt64Ptr:
		return "[" + strconv.FormatInt(int64(le.Uint64(b)), 10) + "]"
	case KindGids:
		var gids []string
		for ; len(b) >= 4; b = b[4:] {
			gids = append(gids, strconv.FormatUint(uint64(le.Uint32(b)), 10))
		}
		return x.array(gids, x.gidCount(a))
	case KindMincore:
		n := (x.arg(1) + 4095) / 4096
		var pages []string
		for i := 0; i < len(b) && uint64(i) < n; i++ {
			pages = append(pages, strconv.Itoa(int(b[i]&1)))
		}
		return x.array(pages, n)
	case KindSigevent:
		return sigeventStr(b)
	case KindOpenHow:
		return openHowStr(b, x.arg(a+1))
	}
	return ""
}

// gidCount is how many gids argument a holds: what getgroups returned,
// setgroups' size.
func (x *ctx) gidCount(a int) uint64 {
	if x.in.isOut(a) {
		return uint64(x.c.Ret)
	}
	return uint64(uint32(x.arg(0)))
}

// array is strace's print_array: at most -s elements, then "...". When
// fewer than n elements were read (and fewer than -s), the rest was not
// readable: strace would have stopped there too.
func (x *ctx) array(elems []string, n uint64) string {
	if len(elems) > x.strsize {
		elems = append(elems[:x.strsize:x.strsize], "...")
	} else if uint64(len(elems)) < n && len(elems) == x.strsize {
		elems = append(elems, "...")
	}
	return "[" + strings.Join(elems, ", ") + "]"
}

// statfsStr is strace's struct statfs (f_flags only when ST_VALID).
func statfsStr(b []byte) string {
	u := func(i int) uint64 { return le.Uint64(b[8*i:]) }
	s := fmt.Sprintf("{f_type=%s, f_bsize=%d, f_blocks=%d, f_bfree=%d, f_bavail=%d, f_files=%d, "+
		"f_ffree=%d, f_fsid={val=[%#x, %#x]}, f_namelen=%d, f_frsize=%d",
		fsMagics.enum(u(0), true), u(1), u(2), u(3), u(4), u(5), u(6),
		le.Uint32(b[56:]), le.Uint32(b[60:]), u(8), u(9))
	if fl := u(10); fl&0x20 != 0 { // ST_VALID
		s += ", f_flags=" + statfsFlags.flags(fl)
	}
	return s + "}"
}

// itimerStr: {it_interval={tv_sec=1, tv_nsec=0}, it_value={tv_sec=2, tv_nsec=0}}.
func itimerStr(b []byte, frac string) string {
	t := func(off int) string {
		return fmt.Sprintf("{tv_sec=%d, %s=%d}", int64(le.Uint64(b[off:])), frac, int64(le.Uint64(b[off+8:])))
	}
	return "{it_interval=" + t(0) + ", it_value=" + t(16) + "}"
}

// UTIME_NOW and UTIME_OMIT (linux/stat.h).
const (
	utimeNow  = (1 << 30) - 1
	utimeOmit = (1 << 30) - 2
)

// utimeStr is one of utimensat's times: the special values by name, a
// time with its date as a comment.
func utimeStr(b []byte) string {
	sec, nsec := int64(le.Uint64(b)), int64(le.Uint64(b[8:]))
	switch nsec {
	case utimeNow:
		return "UTIME_NOW"
	case utimeOmit:
		return "UTIME_OMIT"
	}
	s := fmt.Sprintf("{tv_sec=%d, tv_nsec=%d}", sec, nsec)
	if nsec >= 0 && nsec < 1e9 {
		s += " /* " + time.Unix(sec, nsec).In(localZone).Format("2006-01-02T15:04:05.000000000-0700") + " */"
	}
	return s
}

// openHowStr is strace's struct open_how: flags, mode when O_CREAT,
// O_TMPFILE or a mode is given, resolve.
func openHowStr(b []byte, size uint64) string {
	if size < sizeOpenHow || len(b) < sizeOpenHow {
		return ""
	}
	fl, mode, res := le.Uint64(b), le.Uint64(b[8:]), le.Uint64(b[16:])
	s := "{flags=" + openFlagsStr(fl)
	if fl&0o100 != 0 || fl&0o20200000 == 0o20200000 || mode != 0 {
		s += ", mode=" + octal(mode)
	}
	return s + ", resolve=" + resolveFlags.flags(res) + "}"
}

// sigev_notify values (asm-generic/siginfo.h).
const (
	sigevSignal   = 0
	sigevThread   = 2
	sigevThreadID = 4
)

var sigevNotify = xlat{{sigevSignal, "SIGEV_SIGNAL"}, {1, "SIGEV_NONE"}, {sigevThread, "SIGEV_THREAD"}, {sigevThreadID, "SIGEV_THREAD_ID"}}

// sigeventStr is strace's print_sigevent.
func sigeventStr(b []byte) string {
	s := "{"
	if v := le.Uint64(b); v != 0 {
		s += fmt.Sprintf("sigev_value={sival_int=%d, sival_ptr=%s}, ", int32(v), ptr(v))
	}
	signo, notify := le.Uint32(b[8:]), le.Uint32(b[12:])
	switch notify {
	case sigevSignal, sigevThread, sigevThreadID:
		s += "sigev_signo=" + signalName(int(int32(signo)))
	default:
		s += "sigev_signo=" + strconv.FormatUint(uint64(signo), 10)
	}
	s += ", sigev_notify=" + sigevNotify.enum(uint64(notify), true)
	switch notify {
	case sigevThreadID:
		s += fmt.Sprintf(", sigev_notify_thread_id=%d", int32(le.Uint32(b[16:])))
	case sigevThread:
		s += ", sigev_notify_function=" + ptr(le.Uint64(b[16:])) + ", sigev_notify_attributes=" + ptr(le.Uint64(b[24:]))
	}
	return s + "}"
}
