package ptrace

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// mapping is one line of /proc/PID/maps.
// TODO(elfsym): use elfsym.Maps once it lands; kept local so the engine
// runs against the stub.
type mapping struct {
	start, end, offset uint64
	perms              string
	inode              uint64
	path               string
}

func readMaps(pid int) ([]mapping, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return nil, err
	}
	var ms []mapping
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		lo, hi, _ := strings.Cut(f[0], "-")
		var m mapping
		m.start, _ = strconv.ParseUint(lo, 16, 64)
		m.end, _ = strconv.ParseUint(hi, 16, 64)
		m.perms = f[1]
		m.offset, _ = strconv.ParseUint(f[2], 16, 64)
		m.inode, _ = strconv.ParseUint(f[4], 10, 64)
		if len(f) >= 6 {
			m.path = strings.Join(f[5:], " ")
		}
		ms = append(ms, m)
	}
	return ms, nil
}

// object identifies an ELF file in the maps by path or by inode, since the
// maps show the path the loader opened (symlinks resolved).
type object struct {
	path  string
	inode uint64
}

func objectOf(path string) object {
	o := object{path: path}
	if p, err := filepath.EvalSymlinks(path); err == nil {
		o.path = p
	}
	var st unix.Stat_t
	if unix.Stat(path, &st) == nil {
		o.inode = st.Ino
	}
	return o
}

func (o object) is(m mapping) bool {
	return m.path == o.path || (o.inode != 0 && m.inode == o.inode && m.path != "")
}

// runtimeAddr maps a file offset of an object to its address in the
// process: the mapping that holds that offset gives it directly, with no
// need for the ELF's program headers.
func runtimeAddr(ms []mapping, o object, fileOff uint64) (uint64, bool) {
	for _, m := range ms {
		if o.is(m) && strings.Contains(m.perms, "x") && fileOff >= m.offset && fileOff < m.offset+(m.end-m.start) {
			return m.start + fileOff - m.offset, true
		}
	}
	return 0, false
}

// auxvEntry reads AT_ENTRY, the program's entry point, from /proc/PID/auxv.
func auxvEntry(pid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/auxv", pid))
	if err != nil {
		return 0, err
	}
	for i := 0; i+16 <= len(b); i += 16 {
		if binary.LittleEndian.Uint64(b[i:]) == atEntry {
			return binary.LittleEndian.Uint64(b[i+8:]), nil
		}
	}
	return 0, fmt.Errorf("pid %d: no AT_ENTRY in auxv", pid)
}

const atEntry = 9 // AT_ENTRY in <elf.h>
