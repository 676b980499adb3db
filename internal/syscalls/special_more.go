//go:build linux && amd64

package syscalls

import (
	"strconv"

	"golang.org/x/sys/unix"
)

// mremapArgs: new_address only when the flags make the kernel use it
// (MREMAP_MAYMOVE with MREMAP_FIXED or MREMAP_DONTUNMAP), as strace.
func (x *ctx) mremapArgs() ([]string, int) {
	fl := x.arg(3)
	out := []string{ptr(x.arg(0)), strconv.FormatUint(x.arg(1), 10), strconv.FormatUint(x.arg(2), 10),
		mremapFlags.flags(fl)}
	if fl&mremapMaymove != 0 && fl&(mremapFixed|mremapDontunmap) != 0 {
		out = append(out, ptr(x.arg(4)))
	}
	return out, len(out)
}

// membarrierArgs: cmd, flags, and cpu_id only with MEMBARRIER_CMD_FLAG_CPU.
func (x *ctx) membarrierArgs() ([]string, int) {
	fl := uint64(uint32(x.arg(1)))
	out := []string{membarrierCmds.enum(uint64(uint32(x.arg(0))), true), membarrierFlags.flags(fl)}
	if fl&membarrierFlagCPU != 0 {
		out = append(out, i32(x.arg(2)))
	}
	return out, len(out)
}

// personalityArgs: 0xffffffff (the query) in hex, else type|flags.
func (x *ctx) personalityArgs() ([]string, int) {
	p := uint32(x.arg(0))
	if p == 0xffffffff {
		return []string{"0xffffffff"}, 1
	}
	return []string{personalityStr(p)}, 1
}

// moreResult is the result of the calls this file decodes; ok false
// for the others.
func (x *ctx) moreResult() (string, bool) {
	r := x.c.Ret
	switch x.in.Name {
	case "personality":
		return hex(uint64(r)) + " (" + personalityStr(uint32(r)) + ")", true
	case "membarrier":
		if x.arg(0) == 0 && r != 0 { // MEMBARRIER_CMD_QUERY: the commands supported
			return hex(uint64(r)) + " (" + membarrierCmds.flags(uint64(r)) + ")", true
		}
	case "fcntl":
		if x.arg(1) == unix.F_GET_SEALS {
			if r == 0 {
				return "0", true
			}
			return hex(uint64(r)) + " (seals " + fSeals.flags(uint64(r)) + ")", true
		}
	}
	return "", false
}

// sockoptName names option name at level (SOL_SOCKET's, SOL_TCP's).
func sockoptName(level, name uint64) string {
	switch level {
	case unix.SOL_SOCKET:
		return solSocketOpts.enum(name, false)
	case unix.SOL_TCP:
		return tcpOpts.enum(name, false)
	}
	return strconv.FormatUint(name, 10)
}

// prctlCapArgs: the capability operations' arguments, or false.
func (x *ctx) prctlCapArgs(op uint64) ([]string, bool) {
	switch op {
	case unix.PR_CAPBSET_READ, unix.PR_CAPBSET_DROP:
		return []string{capStr(x.arg(1))}, true
	case unix.PR_CAP_AMBIENT:
		sub := uint64(uint32(x.arg(1)))
		out := []string{capAmbientOps.enum(sub, true)}
		rest := 2
		if sub >= 1 && sub <= 3 { // IS_SET, RAISE, LOWER name a capability
			out = append(out, capStr(x.arg(2)))
			rest = 3
		}
		for a := rest; a < 5; a++ {
			out = append(out, hex(x.arg(a)))
		}
		return out, true
	}
	return nil, false
}

// capStr names a capability; an unknown one is strace's "0x3c /* CAP_??? */".
func capStr(v uint64) string {
	if s, ok := capNames.name(v); ok {
		return s
	}
	return hex(v) + " /* CAP_??? */"
}
