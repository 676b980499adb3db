//go:build linux && amd64

package syscalls

import (
	"strconv"

	"github.com/utap/utap/internal/dec"
)

// strace's -e read=SET and -e write=SET: a full hex and ASCII dump of the
// data a call read from or wrote to an fd of SET, in lines after the
// call's own:
//
//	 | 00000  68 65 6c 6c 6f 20 77 6f  72 6c 64 0a              hello world.     |

// dumpReads and dumpWrites are the calls dumped, by side: the buffer is
// argument 1 (an iovec array for the vectored ones), the fd argument 0.
var (
	dumpReads  = set("read", "pread64", "recvfrom", "readv", "preadv", "preadv2", "recvmsg")
	dumpWrites = set("write", "pwrite64", "sendto", "writev", "pwritev", "pwritev2", "sendmsg")
	dumpIov    = set("readv", "preadv", "preadv2", "writev", "pwritev", "pwritev2")
)

// AppendDump appends the dump of c's data if c moved data on an fd that
// read (for the calls that read) or write (those that write) selects;
// nil selects none. A dump shows the bytes the call moved, its result:
// those an engine did not capture are counted on a line of their own.
func AppendDump(b []byte, c *Call, read, write func(fd int) bool) []byte {
	in := Lookup(c.Nr)
	if in == nil || !c.Returned || c.Ret <= 0 {
		return b
	}
	fd := int(int32(c.Args[0]))
	switch {
	case dumpReads[in.Name] && read != nil && read(fd):
	case dumpWrites[in.Name] && write != nil && write(fd):
	default:
		return b
	}
	x := newCtx(c, nil)
	exit := dumpReads[in.Name]
	data := x.data(1, exit)
	count := int(c.Args[2])
	switch {
	case in.Name == "sendmsg" || in.Name == "recvmsg":
		data, count = msgIov(data)
	case !dumpIov[in.Name]:
		return appendDumpData(b, data, uint64(c.Ret))
	}
	// The captured iovec array: base, len, bytes captured, the bytes.
	left := uint64(c.Ret)
	for i := 0; len(data) >= 24 && i < count && left > 0; i++ {
		ln := le.Uint64(data[8:])
		n, _ := iovCount(le.Uint64(data[16:]))
		data = data[24:]
		n = min(n, len(data))
		ln = min(ln, left)
		if ln == 0 {
			break
		}
		left -= ln
		b = append(b, " * "...)
		b = dec.AppendUint(b, ln)
		b = append(b, " bytes in buffer "...)
		b = dec.AppendInt(b, int64(i))
		b = append(b, '\n')
		b = appendDumpData(b, data[:n], ln)
		data = data[n:]
	}
	return b
}

// appendDumpData dumps the first n bytes of data, as strace's dumpstr.
func appendDumpData(b, data []byte, n uint64) []byte {
	if uint64(len(data)) > n {
		data = data[:n]
	}
	for off := 0; off < len(data); off += 16 {
		row := data[off:min(off+16, len(data))]
		b = append(b, " | "...)
		h := strconv.FormatUint(uint64(off), 16)
		for i := len(h); i < 5; i++ {
			b = append(b, '0')
		}
		b = append(b, h...)
		b = append(b, "  "...)
		for i := range 16 {
			if i < len(row) {
				b = append(b, hexDigits[row[i]>>4], hexDigits[row[i]&15], ' ')
			} else {
				b = append(b, "   "...)
			}
			if i == 7 {
				b = append(b, ' ')
			}
		}
		b = append(b, ' ')
		for i := range 16 {
			c := byte(' ')
			if i < len(row) {
				c = '.'
				if row[i] >= 0x20 && row[i] < 0x7f {
					c = row[i]
				}
			}
			b = append(b, c)
		}
		b = append(b, " |\n"...)
	}
	if uint64(len(data)) < n {
		b = append(b, " * "...)
		b = dec.AppendUint(b, n-uint64(len(data)))
		b = append(b, " bytes more not captured\n"...)
	}
	return b
}
