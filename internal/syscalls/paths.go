//go:build linux && amd64

package syscalls

import (
	"bytes"
	"os"
	"strconv"

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

// FdPaths reads in /proc the paths of the fds call c of process pid shows
// (-y), for an engine that reports the call after the fact: the line is
// decoded once to learn which fds it names, and exactly those are read.
// The race: an fd the process closed since (or a process that exited)
// has no path and shows as a bare number, and an fd closed and reused
// since shows its new file.
func FdPaths(pid int, c *Call, strsize int) map[int]string {
	paths := map[int]string{}
	dir := "/proc/" + strconv.Itoa(pid) + "/fd/"
	Line(c, &Options{StrSize: strsize, FdPath: func(fd int) string {
		p, seen := paths[fd]
		if !seen {
			p, _ = os.Readlink(dir + strconv.Itoa(fd)) // "" when closed: a number
			paths[fd] = p
		}
		return p
	}})
	return paths
}
