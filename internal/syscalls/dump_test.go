//go:build linux && amd64

package syscalls

import (
	"encoding/binary"
	"testing"
)

// TestDump: -e read= and -e write= dumps, as strace 6.1 printed them for
// the same calls.
func TestDump(t *testing.T) {
	data := []byte("hello world, this is a test of the dump\n\x01\x02")
	all := func(int) bool { return true }
	read := call(t, "read", []uint64{3, 0x1000, 131072}, 42, nil, map[int][]byte{1: data})
	want := ` | 00000  68 65 6c 6c 6f 20 77 6f  72 6c 64 2c 20 74 68 69  hello world, thi |
 | 00010  73 20 69 73 20 61 20 74  65 73 74 20 6f 66 20 74  s is a test of t |
 | 00020  68 65 20 64 75 6d 70 0a  01 02                    he dump...       |
`
	if got := string(AppendDump(nil, read, all, nil)); got != want {
		t.Errorf("read:\n%s\nwant\n%s", got, want)
	}
	if got := AppendDump(nil, read, nil, all); got != nil {
		t.Errorf("read under write=: %q", got)
	}
	if got := AppendDump(nil, read, func(fd int) bool { return fd == 4 }, nil); got != nil {
		t.Errorf("fd 3 under read=4: %q", got)
	}
	// writev: each buffer counted, then dumped from offset 0.
	iov := func(parts ...string) []byte {
		var b []byte
		for _, p := range parts {
			b = binary.LittleEndian.AppendUint64(b, 0x2000)
			b = binary.LittleEndian.AppendUint64(b, uint64(len(p)))
			b = binary.LittleEndian.AppendUint64(b, uint64(len(p)))
			b = append(b, p...)
		}
		return b
	}
	wv := call(t, "writev", []uint64{1, 0x1000, 2}, 5, map[int][]byte{1: iov("ab", "cd\n")}, nil)
	want = ` * 2 bytes in buffer 0
 | 00000  61 62                                             ab               |
 * 3 bytes in buffer 1
 | 00000  63 64 0a                                          cd.              |
`
	if got := string(AppendDump(nil, wv, nil, all)); got != want {
		t.Errorf("writev:\n%s\nwant\n%s", got, want)
	}
	// Fewer bytes captured than the call moved: said.
	short := call(t, "write", []uint64{1, 0x1000, 100}, 100, map[int][]byte{1: data[:4]}, nil)
	if got, want := string(AppendDump(nil, short, nil, all)), " | 00000  68 65 6c 6c                                       hell             |\n * 96 bytes more not captured\n"; got != want {
		t.Errorf("short:\n%q\nwant\n%q", got, want)
	}
}
