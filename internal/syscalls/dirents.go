//go:build linux && amd64

package syscalls

import "encoding/binary"

// getdents returns up to its count argument of linux_dirent64 records (a
// 32 KiB buffer is common), more than an engine's record may hold: the
// engine then captures what it can and counts every record (walking the
// d_reclen chain of the returned bytes), and WithDirents makes the two
// one capture for the decoder, which shows the count (and, -v, the
// entries: those not captured as "...").

// direntSize is the smallest linux_dirent64 record: its 19 bytes of
// header and a NUL, 8-aligned.
const direntSize = 24

// direntUnseen is the d_type of a record WithDirents adds for one that
// was counted, not captured.
const direntUnseen = 0xff

// DirentCapture is the index of the getdents capture of call nr, -1
// when it has none.
func DirentCapture(nr int) int {
	in := Lookup(nr)
	if in == nil {
		return -1
	}
	for i, c := range in.Captures {
		if c.Exit && c.Arg < len(in.Args) && in.Args[c.Arg].Kind == KindDirents {
			return i
		}
	}
	return -1
}

// WithDirents is b, the first bytes of a getdents buffer that held total
// records, cut to its whole records and followed by a record marked
// unseen for each of the others; b when it holds them all.
func WithDirents(b []byte, total int) []byte {
	whole, n := 0, 0
	for whole+18 <= len(b) {
		rl := int(binary.LittleEndian.Uint16(b[whole+16:]))
		if rl == 0 || whole+rl > len(b) {
			break
		}
		whole += rl
		n++
	}
	if total <= n {
		return b
	}
	out := append(make([]byte, 0, whole+(total-n)*direntSize), b[:whole]...)
	for range total - n {
		var e [direntSize]byte
		binary.LittleEndian.PutUint16(e[16:], direntSize)
		e[18] = direntUnseen
		out = append(out, e[:]...)
	}
	return out
}
