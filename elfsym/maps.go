package elfsym

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

const deletedSuffix = " (deleted)"

// Maps reads /proc/PID/maps.
func Maps(pid int) ([]Mapping, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return nil, procError(pid, "/proc/PID/maps", err)
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
		return "", procError(pid, "/proc/PID/exe", err)
	}
	return strings.TrimSuffix(path, deletedSuffix), nil
}

// Objects returns the distinct ELF files mapped by process pid, in
// address order (the executable usually first).
func Objects(pid int) ([]string, error) {
	maps, err := Maps(pid)
	if err != nil {
		return nil, err
	}
	return mappedObjects(maps), nil
}

func mappedObjects(maps []Mapping) []string {
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

// Bias returns the load bias of object (an absolute path, matched by path
// or by inode) in maps: runtime address = link-time address + bias.
func Bias(maps []Mapping, object string) (uint64, error) {
	o, err := cachedObject(object, object)
	if err != nil {
		return 0, err
	}
	return o.bias(maps)
}

// bias finds the first mapping of the object whose file offset lies in a
// PT_LOAD segment; the segment's vaddr-offset relation gives the bias
// (vaddr ≡ offset modulo the page size, so no rounding is lost).
func (o *object) bias(maps []Mapping) (uint64, error) {
	match := fileMatcher(o.path)
	for _, m := range maps {
		if !match(m) {
			continue
		}
		for _, p := range o.loads {
			pageOff := p.Off &^ (pageSize - 1)
			if m.Offset >= pageOff && m.Offset < p.Off+max(p.Filesz, 1) {
				return m.Start - (p.Vaddr - p.Off + m.Offset), nil
			}
		}
	}
	return 0, errorf(ErrNoObject, "%s is not mapped in the process", o.path)
}

var pageSize = uint64(os.Getpagesize())

// fileMatcher returns a test of whether a mapping is of the file at
// path: the same path (ignoring " (deleted)"), the same path once
// symlinks are resolved, or the same device and inode (a file reached
// through another mount or a bind mount).
func fileMatcher(path string) func(Mapping) bool {
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

// Entry reads AT_ENTRY, the program's entry point (runtime address), from
// /proc/PID/auxv: where a process held at exec has its libraries mapped
// and relocated, so a tracer stops there to resolve what the loader chose.
func Entry(pid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/auxv", pid))
	if err != nil {
		return 0, procError(pid, "auxv", err)
	}
	for i := 0; i+16 <= len(b); i += 16 {
		if binary.LittleEndian.Uint64(b[i:]) == atEntry {
			return binary.LittleEndian.Uint64(b[i+8:]), nil
		}
	}
	return 0, fmt.Errorf("pid %d: no AT_ENTRY in auxv", pid)
}

const atEntry = 9 // AT_ENTRY in <elf.h>
