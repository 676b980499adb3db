//go:build linux && amd64

package syscalls

import (
	"encoding/binary"

	"golang.org/x/sys/unix"
)

// ReadFunc fills p from the tracee's memory at addr, or fails.
type ReadFunc func(addr uint64, p []byte) error

// Read reads one capture of a call with arguments args (and, at exit,
// return value ret; sp is the stack pointer at entry, for an SP capture)
// the way a user-space tracer does it; nil when the
// address is NULL or unreadable. The kernel engine does the same in BPF.
func Read(c Capture, args [6]uint64, ret int64, sp uint64, strsize int, read ReadFunc) []byte {
	addr := args[c.Arg]
	if c.SP {
		addr = sp + uint64(c.Off)
	}
	if c.Indirect && addr != 0 {
		var p [8]byte
		if read(addr+uint64(c.Off), p[:]) != nil {
			return nil
		}
		addr = binary.LittleEndian.Uint64(p[:])
	}
	if addr == 0 {
		return nil
	}
	lim := MaxFor(c, strsize)
	switch {
	case c.StrArray:
		return readStrArray(read, addr, lim, c.CountOnly)
	case c.Str:
		return readStr(read, addr, lim)
	case c.Iov:
		return readIov(c, args, ret, lim, read)
	case c.Msg:
		return readMsg(addr, ret, c.LenRet, lim, read)
	}
	n := uint64(c.Size)
	if c.Size == 0 && c.LenArg >= 0 {
		n = args[c.LenArg]
	}
	if c.LenRet {
		n = uint64(max(ret, 0))
	}
	if c.Elem > 0 && c.Size == 0 {
		n *= uint64(c.Elem)
	}
	n = min(n, uint64(lim))
	b := make([]byte, n)
	if n > 0 && read(addr, b) != nil {
		return nil
	}
	return b
}

// ReadSide reads the captures of info on one side, the entry's or (exit)
// the exit's, index for index with info.Captures (the other side's nil);
// nil when the call has none. A failed call's outputs are not read: the
// kernel wrote none.
func ReadSide(info *Info, args [6]uint64, ret int64, sp uint64, exit bool, strsize int, read ReadFunc) [][]byte {
	if len(info.Captures) == 0 {
		return nil
	}
	out := make([][]byte, len(info.Captures))
	for i, cp := range info.Captures {
		// An output is read only when the call succeeded, but readv's
		// iovecs: strace shows a failed call's elements (nothing read).
		if cp.Exit == exit && (!(exit && ret < 0) || cp.Iov && cp.LenRet) {
			// What the result says first: at a stop after the call, the
			// new thread may have run and exited already, clearing the
			// word (TestCLIClone3ParentTid on the ptrace engine).
			if out[i] = FromResult(cp, info.Nr, ret); out[i] == nil {
				out[i] = Read(cp, args, ret, sp, strsize, read)
			}
		}
	}
	return out
}

// readStr reads a NUL-terminated string of at most lim bytes, NUL
// included when it fits; an unreadable page after the start ends it.
func readStr(read ReadFunc, addr uint64, lim int) []byte {
	var out []byte
	for len(out) < lim {
		n := min(lim-len(out), int(4096-addr&4095))
		b := make([]byte, n)
		if read(addr, b) != nil {
			return out
		}
		for i, c := range b {
			if c == 0 {
				return append(out, b[:i+1]...)
			}
		}
		out = append(out, b...)
		addr += uint64(n)
	}
	return out
}

// readStrArray reads a NULL-terminated array of string pointers as the
// strings joined, each NUL-terminated, with one more NUL when the array
// ended within lim bytes (Call's layout). countOnly stores each string as
// a lone NUL.
func readStrArray(read ReadFunc, addr uint64, lim int, countOnly bool) []byte {
	var out []byte
	var p [8]byte
	for len(out) < lim {
		if read(addr, p[:]) != nil {
			return out
		}
		sp := binary.LittleEndian.Uint64(p[:])
		if sp == 0 {
			return append(out, 0)
		}
		if countOnly {
			out = append(out, 0)
		} else {
			s := readStr(read, sp, min(lim-len(out), 4096))
			if len(s) == 0 || s[len(s)-1] != 0 {
				s = append(s, 0)
			}
			out = append(out, s...)
		}
		addr += 8
	}
	return out
}

// readIov reads an iovec array in Capture.Iov's layout.
func readIov(c Capture, args [6]uint64, ret int64, lim int, read ReadFunc) []byte {
	count := uint64(MaxIovElems)
	if c.LenArg >= 0 {
		count = min(args[c.LenArg], MaxIovElems)
	}
	left := int64(-1) // readv: bytes the return value leaves
	if c.LenRet {
		left = max(ret, 0)
	}
	return readIovAt(args[c.Arg], count, left, lim, read)
}

// readIovAt reads count iovecs at addr, and at most lim bytes of each
// and left (>= 0) of all.
func readIovAt(addr, count uint64, left int64, lim int, read ReadFunc) []byte {
	var out []byte
	var iov [16]byte
	for i := uint64(0); i < count; i++ {
		if read(addr+16*i, iov[:]) != nil {
			break
		}
		base, size := binary.LittleEndian.Uint64(iov[:8]), binary.LittleEndian.Uint64(iov[8:])
		n := min(size, uint64(lim))
		if left >= 0 {
			n = min(n, uint64(left))
			left -= int64(n)
		}
		data := make([]byte, n)
		if n > 0 && read(base, data) != nil {
			n, data = IovUnread, nil
		}
		out = append(out, iov[:]...)
		out = binary.LittleEndian.AppendUint64(out, n)
		out = append(out, data...)
	}
	return out
}

// FromResult is what capture c of call nr holds once the call returned
// ret, when the result says it: clone3's parent_tid is the new thread's
// id. It is taken rather than the memory (ReadSide, and the kernel
// engine's reads after the fact), which glibc shares with the thread's
// own tid word, cleared when the thread exits. nil otherwise.
func FromResult(c Capture, nr int, ret int64) []byte {
	if nr != unix.SYS_CLONE3 || !c.Indirect || c.Off != clone3ParentTID || ret <= 0 {
		return nil
	}
	return binary.LittleEndian.AppendUint32(nil, uint32(ret))
}
