//go:build linux && amd64

package syscalls

import (
	"errors"
	"testing"

	"golang.org/x/sys/unix"
)

// TestStyles: -X raw and verbose, -e raw= and -e verbose=, each line as
// strace 6.1 prints it.
func TestStyles(t *testing.T) {
	open := func() *Call {
		return call(t, "openat", []uint64{0xffffff9c, 0x7f5b3a0d80b1, unix.O_RDONLY | unix.O_CLOEXEC, 0}, 3,
			map[int][]byte{1: cs("/etc/ld.so.cache")}, nil)
	}
	mmap := call(t, "mmap", []uint64{0, 8192, 3, 0x22, ^uint64(0), 0}, 0x7f8ddfaf5000, nil, nil)
	kill := call(t, "kill", []uint64{123, 17}, 0, nil, nil)
	fstat := call(t, "newfstatat", []uint64{3, 0x7f00000010, 0x7ffd8b52c240, unix.AT_EMPTY_PATH}, 0,
		map[int][]byte{1: cs("")}, map[int][]byte{2: statBuf(unix.S_IFREG|0o644, 33703, 0)})
	access := call(t, "access", []uint64{0x7f44ca0762a0, 4}, -int64(unix.ENOENT), map[int][]byte{0: cs("/etc/ld.so.preload")}, nil)
	for _, c := range []struct {
		c    *Call
		o    Options
		want string
	}{
		{open(), Options{Xlat: XlatRaw}, `openat(-100, "/etc/ld.so.cache", 0x80000) = 3`},
		{open(), Options{Xlat: XlatVerbose}, `openat(-100 /* AT_FDCWD */, "/etc/ld.so.cache", 0x80000 /* O_RDONLY|O_CLOEXEC */) = 3`},
		{mmap, Options{Xlat: XlatRaw}, `mmap(NULL, 8192, 0x3, 0x22, -1, 0) = 0x7f8ddfaf5000`},
		{mmap, Options{Xlat: XlatVerbose}, `mmap(NULL, 8192, 0x3 /* PROT_READ|PROT_WRITE */, 0x22 /* MAP_PRIVATE|MAP_ANONYMOUS */, -1, 0) = 0x7f8ddfaf5000`},
		{kill, Options{Xlat: XlatRaw}, `kill(123, 17) = 0`},
		{kill, Options{Xlat: XlatVerbose}, `kill(123, 17 /* SIGCHLD */) = 0`},
		{open(), Options{Raw: true}, `openat(0xffffff9c, 0x7f5b3a0d80b1, 0x80000, 0) = 0x3`},
		{access, Options{Raw: true}, `access(0x7f44ca0762a0, 0x4) = -1 ENOENT (No such file or directory)`},
		{fstat, Options{Terse: true}, `newfstatat(3, "", 0x7ffd8b52c240, AT_EMPTY_PATH) = 0`},
		{fstat, Options{}, `newfstatat(3, "", {st_mode=S_IFREG|0644, st_size=33703, ...}, AT_EMPTY_PATH) = 0`},
	} {
		if got := Line(c.c, &c.o); got != c.want {
			t.Errorf("%+v:\n got %s\nwant %s", c.o, got, c.want)
		}
	}
	if _, err := ParseXlat("names"); !errors.Is(err, ErrXlatStyle) {
		t.Errorf("ParseXlat(names): %v", err)
	}
}
