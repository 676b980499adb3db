//go:build linux && amd64

package syscalls

import (
	"bytes"

	"golang.org/x/sys/unix"
)

// Touched is what a call names of the file system, for strace's -P: its
// path arguments as the call gave them (as far as they were read) and
// its file descriptor arguments (AT_FDCWD left out).
func Touched(c *Call) (paths []string, fds []int) {
	x := newCtx(c, nil)
	for a, arg := range x.in.Args {
		if a >= len(c.Args) {
			break
		}
		switch arg.Kind {
		case KindPath:
			if b := x.data(a, false); b != nil {
				if i := bytes.IndexByte(b, 0); i >= 0 {
					b = b[:i]
				}
				paths = append(paths, string(b))
			}
		case KindFd, KindDirFd:
			if fd := int(int32(c.Args[a])); fd >= 0 && fd != unix.AT_FDCWD {
				fds = append(fds, fd)
			}
		}
	}
	return paths, fds
}
