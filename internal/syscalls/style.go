//go:build linux && amd64

package syscalls

// strace's -X (how constants show) and -e raw= (a call undecoded).

// constKinds are the argument kinds shown as named constants, true for
// those the kernel takes as 64 bits.
var constKinds = map[Kind]bool{
	KindXlat: true, KindProt: true, KindMapFlags: true, KindMadvise: true, KindCloneFlags: true,
	KindOpenFlags: false, KindAccessMode: false, KindAtFlags: false, KindSignal: false, KindSigHow: false,
	KindFcntlCmd: false, KindIoctlReq: false, KindSockDomain: false, KindSockType: false, KindSockProto: false,
	KindWhence: false, KindFadvise: false, KindWaitOpts: false, KindPrctlOp: false, KindArchPrctlOp: false,
	KindFutexOp: false, KindStatxMask: false, KindGrndFlags: false, KindFdFlags: false, KindEfdFlags: false,
	KindEpollOp: false, KindEpollFlags: false, KindPollEvents: false, KindClockID: false, KindRlimitRes: false,
	KindSockLevel: false, KindMsgFlags: false, KindRenameFlags: false, KindTimerFlags: false, KindDirFd: false,
}

// styled is argument a (of kind k, shown by name as named) in the -X
// style: strace's raw form is the number in hex, a signal's in decimal,
// AT_FDCWD as -100; verbose adds the names in a comment.
func (x *ctx) styled(a int, k Kind, named string) string {
	if x.o.Xlat == XlatAbbrev {
		return named // the default: no lookup per argument
	}
	wide, ok := constKinds[k]
	if !ok {
		return named
	}
	v := x.arg(a)
	if !wide {
		v = uint64(uint32(v))
	}
	var raw string
	switch k {
	case KindDirFd:
		if int32(v) != -100 {
			return named // an fd, not a constant
		}
		raw = "-100"
	case KindSignal:
		raw = i32(v)
	case KindSockType:
		raw = hex(v & 0xf)
		if v&^0xf != 0 {
			raw += "|" + hex(v&^0xf)
		}
	default:
		raw = hex(v)
	}
	if x.o.Xlat == XlatRaw || raw == named {
		return raw
	}
	return raw + " /* " + named + " */"
}

// rawArgs is every argument the call takes, in hex (-e raw=).
func (x *ctx) rawArgs() []string {
	out := make([]string, len(x.in.Args))
	for a := range out {
		out[a] = hex(x.arg(a))
	}
	return out
}
