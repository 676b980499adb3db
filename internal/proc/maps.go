//go:build linux && amd64

package proc

import (
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

const deletedSuffix = " (deleted)"

// Maps reads /proc/PID/maps.
// Mapping is one line of /proc/PID/maps.
type Mapping struct {
	Start, End, Offset uint64
	Perms              string
	Dev                string
	Inode              uint64
	Path               string
}

// Maps reads /proc/PID/maps.
func Maps(pid int) ([]Mapping, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return nil, Error(pid, "/proc/PID/maps", err)
	}
	var maps []Mapping
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		m, ok := parseMapping(sc.Text())
		if !ok {
			return nil, fmt.Errorf("/proc/%d/maps: cannot parse %q", pid, sc.Text())
		}
		maps = append(maps, m)
	}
	return maps, nil
}

// parseMapping parses "start-end perms offset dev inode   path".
func parseMapping(line string) (Mapping, bool) {
	var m Mapping
	fields := strings.SplitN(line, " ", 6)
	if len(fields) < 5 {
		return m, false
	}
	start, end, ok := strings.Cut(fields[0], "-")
	if !ok {
		return m, false
	}
	var err [4]error
	m.Start, err[0] = strconv.ParseUint(start, 16, 64)
	m.End, err[1] = strconv.ParseUint(end, 16, 64)
	m.Perms = fields[1]
	m.Offset, err[2] = strconv.ParseUint(fields[2], 16, 64)
	m.Dev = fields[3]
	m.Inode, err[3] = strconv.ParseUint(fields[4], 10, 64)
	for _, e := range err {
		if e != nil {
			return m, false
		}
	}
	if len(fields) == 6 {
		m.Path = strings.TrimLeft(fields[5], " ")
	}
	return m, true
}

// Exe returns the path of the executable of process pid.
func Exe(pid int) (string, error) {
	path, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return "", Error(pid, "/proc/PID/exe", err)
	}
	return strings.TrimSuffix(path, deletedSuffix), nil
}

// Objects returns the distinct ELF files in maps, in address order (the
// executable usually first).
func Objects(maps []Mapping) []string {
	var paths []string
	seen := map[string]bool{}
	for _, m := range maps {
		p := strings.TrimSuffix(m.Path, deletedSuffix)
		if !strings.HasPrefix(p, "/") || m.Inode == 0 || seen[p] {
			continue
		}
		seen[p] = true
		if isELF(p) {
			paths = append(paths, p)
		}
	}
	return paths
}

func isELF(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var magic [4]byte
	_, err = f.ReadAt(magic[:], 0)
	return err == nil && string(magic[:]) == "\x7fELF"
}

// Bias returns the load bias of the file mapped by m, whose PT_LOAD
// segments are loads: runtime address = link-time address + bias. The
// segment holding m's file offset gives it (vaddr ≡ offset modulo the page
// size, so a mapping starting at the page below the segment's offset counts
// too); false when m maps none of them.
func Bias(m Mapping, loads []elf.ProgHeader) (uint64, bool) {
	for _, p := range loads {
		pageOff := p.Off &^ (pageSize - 1)
		if m.Offset >= pageOff && m.Offset < p.Off+max(p.Filesz, 1) {
			return m.Start - (p.Vaddr - p.Off + m.Offset), true
		}
	}
	return 0, false
}

// BiasIn returns the load bias of the file at path in maps: the first of
// its mappings that Bias places.
func BiasIn(maps []Mapping, path string, loads []elf.ProgHeader) (uint64, bool) {
	is := FileMatcher(path)
	for _, m := range maps {
		if is(m) {
			if b, ok := Bias(m, loads); ok {
				return b, true
			}
		}
	}
	return 0, false
}

// Exec says whether m's pages may run: code.
func (m Mapping) Exec() bool { return len(m.Perms) >= 3 && m.Perms[2] == 'x' }

// Holds says whether m maps the file offset off.
func (m Mapping) Holds(off uint64) bool { return off >= m.Offset && off < m.Offset+(m.End-m.Start) }

// AddrOf is the runtime address of the file offset off, which m holds.
func (m Mapping) AddrOf(off uint64) uint64 { return m.Start + off - m.Offset }

// MappingOf returns the executable mapping, among those is accepts, that
// holds the file offset fileOff: it gives the runtime address directly.
func MappingOf(maps []Mapping, is func(Mapping) bool, fileOff uint64) (Mapping, bool) {
	for _, m := range maps {
		if m.Exec() && m.Holds(fileOff) && is(m) {
			return m, true
		}
	}
	return Mapping{}, false
}

var pageSize = uint64(os.Getpagesize())

// FileMatcher returns a test of whether a mapping is of the file at
// path: the same path (ignoring " (deleted)"), the same path once
// symlinks are resolved, or the same device and inode (a file reached
// through another mount or a bind mount).
func FileMatcher(path string) func(Mapping) bool {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		real = path
	}
	var st unix.Stat_t
	statOK := unix.Stat(path, &st) == nil
	return func(m Mapping) bool {
		mp := strings.TrimSuffix(m.Path, deletedSuffix)
		if mp == "" || mp[0] != '/' {
			return false
		}
		if mp == path || mp == real {
			return true
		}
		if !statOK || m.Inode == 0 || st.Ino != m.Inode {
			return false
		}
		maj, min, ok := strings.Cut(m.Dev, ":")
		if !ok {
			return false
		}
		ma, err1 := strconv.ParseUint(maj, 16, 32)
		mi, err2 := strconv.ParseUint(min, 16, 32)
		return err1 == nil && err2 == nil && unix.Major(st.Dev) == uint32(ma) && unix.Minor(st.Dev) == uint32(mi)
	}
}
