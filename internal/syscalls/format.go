//go:build linux && amd64

package syscalls

import (
	"encoding/binary"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

var le = binary.LittleEndian

// ctx is one call being formatted.
type ctx struct {
	c       *Call
	in      *Info
	o       *Options
	strsize int
	argBuf  [6]string // args' result, reused by a Formatter
}

var noOptions Options

func newCtx(c *Call, o *Options) *ctx {
	x := &ctx{}
	x.init(c, o)
	return x
}

// init readies x for call c.
func (x *ctx) init(c *Call, o *Options) {
	if o == nil {
		o = &noOptions
	}
	*x = ctx{c: c, o: o, strsize: o.StrSize, in: Lookup(c.Nr)}
	if x.strsize <= 0 {
		x.strsize = 32
	}
	if x.in == nil {
		// Unknown number: strace shows syscall_0x...(6 hex args).
		x.in = &Info{Nr: c.Nr, Name: "syscall_" + hex(uint64(c.Nr))}
		for i := 0; i < 6; i++ {
			x.in.Args = append(x.in.Args, Arg{Kind: KindHex})
		}
	} else if x.in.Nr > straceMaxNr {
		cp := *x.in
		cp.Args = make([]Arg, 6)
		for i := range cp.Args {
			cp.Args[i].Kind = KindHex
		}
		x.in = &cp
	}
}

// data returns the capture of argument a on one side, nil if not read.
func (x *ctx) data(a int, exit bool) []byte {
	n := x.in.capture(a, exit)
	side := x.c.Entry
	if exit {
		side = x.c.Exit
	}
	if n < 0 || n >= len(side) {
		return nil
	}
	return side[n]
}

// failed: outputs are not shown (strace prints their address instead).
func (x *ctx) failed() bool { return !x.c.Returned || isErr(x.c.Ret) }

func (x *ctx) arg(a int) uint64 { return x.c.Args[a] }

// Head returns the line up to where the call's output arguments start:
// `openat(AT_FDCWD, "/etc/hostname", O_RDONLY|O_CLOEXEC` or `read(3, `.
// An unfinished call is shown as Head + " <unfinished ...>".
func Head(c *Call, o *Options) string {
	x := newCtx(c, o)
	args, split := x.args()
	s := x.in.displayName() + "(" + strings.Join(args[:split], ", ")
	if split > 0 && split < len(args) {
		s += ", "
	}
	return s
}

// Tail returns the rest of the call text, from the output arguments to
// the closing parenthesis: `"hello\n", 8192)` or `)`.
func Tail(c *Call, o *Options) string {
	x := newCtx(c, o)
	args, split := x.args()
	return strings.Join(args[split:], ", ") + ")"
}

// Line is the whole call as strace prints it: Head+Tail+" = "+Result,
// its arguments decoded once.
func Line(c *Call, o *Options) string {
	var f Formatter
	b := f.AppendCall(nil, c, o)
	b = append(b, " = "...)
	return string(f.AppendResult(b, c, o))
}

// args renders every argument and returns where the outputs start.
func (x *ctx) args() ([]string, int) {
	if x.o.Raw {
		out := x.rawArgs()
		return out, len(out)
	}
	if f := x.in.special; f != nil {
		return f(x)
	}
	out := x.argBuf[:0]
	split := -1
	for a, arg := range x.in.Args {
		s, show := x.render(a, arg.Kind)
		if !show {
			continue
		}
		s = x.styled(a, arg.Kind, s)
		if split < 0 && x.in.isOut(a) {
			split = len(out)
		}
		out = append(out, s)
	}
	if split < 0 {
		split = len(out)
	}
	return out, split
}

// is32 reports C types the kernel takes as 32 bits.
func is32(ctype string) bool {
	switch strings.TrimPrefix(ctype, "const ") {
	case "int", "unsigned int", "unsigned", "u32", "__u32", "pid_t", "uid_t", "gid_t",
		"key_t", "mqd_t", "timer_t", "s32", "__s32", "qid_t", "clockid_t", "rwf_t", "umode_t":
		return true
	}
	return false
}

func (x *ctx) fd(v uint64) string {
	n := int(int32(v))
	s := strconv.Itoa(n)
	if n == unix.AT_FDCWD {
		s = "AT_FDCWD"
	}
	if x.o.FdPath != nil && (n >= 0 || n == unix.AT_FDCWD) {
		if p := x.o.FdPath(n); p != "" {
			s += "<" + p + ">"
		}
	}
	return s
}

// render shows argument a as kind k; show is false for an argument
// strace leaves out (open's mode without O_CREAT).
func (x *ctx) render(a int, k Kind) (string, bool) {
	v := x.arg(a)
	ctype := ""
	if a < len(x.in.Args) {
		ctype = x.in.Args[a].CType
	}
	out := x.in.isOut(a)
	switch k {
	case KindNone:
		return "", false
	case KindXlat:
		return argXlats[x.in.Name][a].str(v), true
	case KindUint:
		if is32(ctype) {
			v = uint64(uint32(v))
		}
		return strconv.FormatUint(v, 10), true
	case KindInt:
		if is32(ctype) || ctype == "" {
			return strconv.Itoa(int(int32(v))), true
		}
		return strconv.FormatInt(int64(v), 10), true
	case KindLong:
		return strconv.FormatInt(int64(v), 10), true
	case KindHex:
		return hex(v), true
	case KindPtr:
		return ptr(v), true
	case KindFd, KindDirFd:
		return x.fd(v), true
	case KindPath, KindStr:
		max := x.strsize
		if k == KindPath {
			max = pathMax
		}
		return x.str(a, out, max, true, false), true
	case KindInBuf:
		return x.str(a, false, x.strsize, false, false), true
	case KindOutBuf, KindOutBufHex:
		if x.in.Name == "getcwd" {
			return x.str(a, true, pathMax, true, false), true
		}
		return x.str(a, true, x.strsize, false, k == KindOutBufHex), true
	case KindOpenFlags:
		return openFlagsStr(uint64(uint32(v))), true
	case KindOpenMode:
		fl := x.arg(a - 1)
		if fl&unix.O_CREAT == 0 && fl&unix.O_TMPFILE != unix.O_TMPFILE {
			return "", false
		}
		return octal(uint64(uint32(v))), true
	case KindMode, KindUmask:
		return octal(uint64(uint32(v))), true
	case KindAccessMode:
		if v == 0 {
			return "F_OK", true
		}
		return accessModes.flags(v), true
	case KindAtFlags:
		if x.in.Name == "statx" {
			return statxFlags(uint64(uint32(v))), true
		}
		return atFlags.flags(uint64(uint32(v))), true
	case KindProt:
		return protFlags.flags(v), true
	case KindMapFlags:
		return mapFlagsStr(v), true
	case KindMadvise:
		return madvAdvice.enum(v, false), true
	case KindCloneFlags:
		return cloneFlagsStr(v), true
	case KindSignal:
		return signalName(int(int32(v))), true
	case KindSigHow:
		return sigHow.enum(v, true), true
	case KindFcntlCmd:
		return fcntlCmds.enum(uint64(uint32(v)), true), true
	case KindIoctlReq:
		return ioctlReqStr(v), true
	case KindSockDomain:
		return sockDomains.enum(uint64(uint32(v)), false), true
	case KindSockType:
		if x.in.Name == "accept4" {
			return sockTypeFlags.flags(uint64(uint32(v))), true
		}
		return sockTypeStr(uint64(uint32(v))), true
	case KindSockProto:
		return sockProtoStr(x.arg(0), uint64(uint32(v))), true
	case KindWhence:
		return whences.enum(uint64(uint32(v)), false), true
	case KindFadvise:
		return fadvice.enum(uint64(uint32(v)), false), true
	case KindWaitOpts:
		return waitOpts.flags(uint64(uint32(v))), true
	case KindPrctlOp:
		return prctlOps.enum(uint64(uint32(v)), true), true
	case KindArchPrctlOp:
		return archPrctlOps.enum(uint64(uint32(v)), true), true
	case KindFutexOp:
		return futexOpStr(uint64(uint32(v))), true
	case KindStatxMask:
		return statxMask.flags(uint64(uint32(v))), true
	case KindGrndFlags:
		return grndFlags.flags(uint64(uint32(v))), true
	case KindFdFlags:
		return openFlags.flags(uint64(uint32(v))), true
	case KindEfdFlags:
		return efdFlags.flags(uint64(uint32(v))), true
	case KindEpollOp:
		return epollOps.enum(uint64(uint32(v)), false), true
	case KindEpollFlags:
		return epollFlags.flags(uint64(uint32(v))), true
	case KindPollEvents:
		return pollEvents.flags(uint64(uint32(v))), true
	case KindClockID:
		return clockIDs.enum(uint64(uint32(v)), false), true
	case KindRlimitRes:
		return rlimitRes.enum(uint64(uint32(v)), false), true
	case KindSockLevel:
		return sockLevels.enum(uint64(uint32(v)), false), true
	case KindMsgFlags:
		return msgFlags.flags(uint64(uint32(v))), true
	case KindRenameFlags:
		return renameFlags.flags(uint64(uint32(v))), true
	case KindTimerFlags:
		return timerFlags.flags(uint64(uint32(v))), true
	}
	if x.o.Terse {
		return ptr(v), true // -e verbose=: structures as addresses
	}
	return x.structArg(a, k, out), true
}

// str shows a string or buffer capture of argument a.
func (x *ctx) str(a int, exit bool, max int, nulTerm, forceHex bool) string {
	v := x.arg(a)
	if v == 0 {
		return "NULL"
	}
	if exit && x.failed() {
		return hex(v)
	}
	b := x.data(a, exit)
	if b == nil {
		return hex(v)
	}
	k := x.in.capture(a, exit)
	if nulTerm && k >= 0 && (len(b) == 0 || b[len(b)-1] != 0) && len(b) < MaxFor(x.in.Captures[k], x.strsize) {
		// A fault before the NUL, short of the limit: strace shows the
		// address (umovestr's short read).
		return hex(v)
	}
	if !nulTerm && !exit && k >= 0 {
		// Input buffer: the length argument says whether bytes were left.
		c := x.in.Captures[k]
		if c.LenArg >= 0 && x.arg(c.LenArg) > uint64(len(b)) && len(b) == max {
			return quoter(x.o.Hex).quote(b, max, false, forceHex) + "..."
		}
	}
	if exit && !nulTerm && x.c.Ret >= 0 && int64(len(b)) > x.c.Ret {
		b = b[:x.c.Ret]
	}
	if exit && !nulTerm && x.c.Ret > int64(len(b)) && len(b) == max {
		return quoter(x.o.Hex).quote(b, max, false, forceHex) + "..."
	}
	return quoter(x.o.Hex).quote(b, max, nulTerm, forceHex)
}
