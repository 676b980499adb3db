package ptrace

import (
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/utap/utap/elfsym"
)

// mapping is one line of /proc/PID/maps.
type mapping = elfsym.Mapping

var readMaps = elfsym.Maps

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
	return m.Path == o.path || (o.inode != 0 && m.Inode == o.inode && m.Path != "")
}

// mappingOf returns the executable mapping of o that holds the file
// offset fileOff: it gives the runtime address directly, with no need for
// the ELF's program headers.
func mappingOf(ms []mapping, o object, fileOff uint64) (mapping, bool) {
	for _, m := range ms {
		if o.is(m) && strings.Contains(m.Perms, "x") && fileOff >= m.Offset && fileOff < m.Offset+(m.End-m.Start) {
			return m, true
		}
	}
	return mapping{}, false
}

// auxvEntry reads AT_ENTRY, the program's entry point.
var auxvEntry = elfsym.Entry
