//go:build linux && amd64

package main

import (
	"os"
	"path/filepath"
	"strconv"

	"github.com/utap/utap/internal/syscalls"
	"github.com/utap/utap/probe"
)

// strace's -P PATH: only the system calls that name PATH, as a path
// argument (as given, or resolved against the process's working
// directory) or as a file descriptor open on it. Events come after the
// call (the uprobe engine's records, the pads'), when /proc may name the
// fd's next file: the filter follows the fds itself from the calls it
// sees (open* returning one, dup*, fcntl's F_DUPFD, close), /proc
// (or the engine's -y paths) only for an fd opened before it saw any.

// setPaths takes -P's paths: each as given and as it resolves now.
func (f *eventFilter) setPaths(paths []string) {
	if len(paths) == 0 {
		return
	}
	f.paths = map[string]bool{}
	for _, p := range paths {
		f.paths[p] = true
		if abs, err := filepath.Abs(p); err == nil {
			f.paths[abs] = true
			if real, err := filepath.EvalSymlinks(abs); err == nil {
				f.paths[real] = true
			}
		}
	}
}

// touches says whether ev's call names one of -P's paths.
func (f *eventFilter) touches(ev *probe.Event) bool {
	paths, fds := syscalls.Touched(ev.Sys)
	hit := f.pathHit(ev, paths) || f.fdHit(ev, fds)
	f.follow(ev, paths)
	return hit
}

func (f *eventFilter) pathHit(ev *probe.Event, paths []string) bool {
	for _, p := range paths {
		if f.paths[p] {
			return true
		}
		if !filepath.IsAbs(p) && ev.PID > 0 {
			if cwd, err := os.Readlink("/proc/" + strconv.Itoa(ev.PID) + "/cwd"); err == nil && f.paths[filepath.Join(cwd, p)] {
				return true
			}
		}
	}
	return false
}

func (f *eventFilter) fdHit(ev *probe.Event, fds []int) bool {
	for _, fd := range fds {
		if f.paths[f.fdPath(ev, fd)] {
			return true
		}
	}
	return false
}

// fdPath is what fd of ev's process is open on: as the filter followed
// it, else as the engine or /proc says.
func (f *eventFilter) fdPath(ev *probe.Event, fd int) string {
	if p, ok := f.fds[[2]int{ev.PID, fd}]; ok {
		return p
	}
	if p, ok := ev.Sys.FdPaths[fd]; ok {
		return p
	}
	p, _ := os.Readlink("/proc/" + strconv.Itoa(ev.PID) + "/fd/" + strconv.Itoa(fd))
	return p
}

// follow updates the fds the filter knows from ev's call.
func (f *eventFilter) follow(ev *probe.Event, paths []string) {
	c := ev.Sys
	in := syscalls.Lookup(c.Nr)
	if in == nil || !c.Returned || c.Ret < 0 {
		return
	}
	if f.fds == nil {
		f.fds = map[[2]int]string{}
	}
	key := func(fd uint64) [2]int { return [2]int{ev.PID, int(int32(fd))} }
	switch in.Name {
	case "open", "openat", "openat2", "creat":
		if len(paths) > 0 {
			p := paths[0]
			if !filepath.IsAbs(p) {
				if cwd, err := os.Readlink("/proc/" + strconv.Itoa(ev.PID) + "/cwd"); err == nil {
					p = filepath.Join(cwd, p)
				}
			}
			f.fds[key(uint64(c.Ret))] = p
		}
	case "dup", "fcntl":
		if in.Name == "fcntl" && c.Args[1] != 0 && c.Args[1] != 1030 { // F_DUPFD, F_DUPFD_CLOEXEC
			return
		}
		f.fds[key(uint64(c.Ret))] = f.fdPath(ev, int(int32(c.Args[0])))
	case "dup2", "dup3":
		f.fds[key(c.Args[1])] = f.fdPath(ev, int(int32(c.Args[0])))
	case "close":
		f.fds[key(c.Args[0])] = ""
	}
}
