//go:build linux && amd64

package uprobe

import (
	"golang.org/x/sys/unix"

	"github.com/utap/utap/internal/syscalls"
)

// sysLookup describes call nr, from internal/syscalls, with strings
// capped for strsize (-s).
func sysLookup(nr, strsize int) (sysInfo, bool) {
	in := syscalls.Lookup(nr)
	if in == nil {
		return sysInfo{}, false
	}
	// rt_sigreturn restores orig_ax to -1 with the registers, so no exit
	// tracepoint names it: sent at entry, as the calls that never return.
	info := sysInfo{noReturn: in.NoReturn || nr == unix.SYS_RT_SIGRETURN}
	for _, c := range in.Captures {
		sc := sysCap{arg: c.Arg, exit: c.Exit, kind: capBytes, size: c.Size, lenArg: c.LenArg, lenRet: c.LenRet,
			max: syscalls.MaxFor(c, strsize), spOff: -1}
		if c.SP {
			sc.spOff = c.Off
		}
		switch {
		case c.Indirect && !c.Exit && c.Off == 0:
			sc.indirect = true
		case c.Msg || c.Indirect:
			sc.kind, sc.user = capNone, true
		case c.Iov:
			sc.kind, sc.left = capIov, c.LenRet
		case c.Str:
			sc.kind = capStr
		case c.StrArray && c.CountOnly:
			sc.kind = capStrCount
		case c.StrArray:
			// argv's bytes, and envp's where shown whole (-e
			// abbrev=none): 4 KiB, beside the other captures.
			sc.kind, sc.max = capStrArray, min(sc.max, 4096)
		case c.Elem > 0 && c.Size == 0:
			sc.elem = c.Elem
		}
		info.caps = append(info.caps, sc)
	}
	return info, true
}
