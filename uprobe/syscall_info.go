//go:build linux && amd64

package uprobe

import "github.com/utap/utap/internal/syscalls"

// sysLookup describes call nr, from internal/syscalls, with strings
// capped for strsize (-s).
func sysLookup(nr, strsize int) (sysInfo, bool) {
	in := syscalls.Lookup(nr)
	if in == nil {
		return sysInfo{}, false
	}
	info := sysInfo{noReturn: in.NoReturn}
	for _, c := range in.Captures {
		sc := sysCap{arg: c.Arg, exit: c.Exit, kind: capBytes, size: c.Size, lenArg: c.LenArg, lenRet: c.LenRet,
			max: syscalls.MaxFor(c, strsize)}
		switch {
		case c.Elem > 0 || c.Iov:
			sc.kind = capNone // not read yet: lengths in elements, iovecs
		case c.Str:
			sc.kind = capStr
		case c.StrArray:
			// MaxFor is each string's cap, Max the strings'.
			sc.kind, sc.max = capStrArray, c.Max
		}
		info.caps = append(info.caps, sc)
	}
	return info, true
}
