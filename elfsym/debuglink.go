//go:build linux && amd64

package elfsym

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
)

// debugRoot is where distributions install separate debug info; a
// variable so tests can point it at a temporary directory.
var debugRoot = "/usr/lib/debug"

// findDebugFile looks for the separate debug info of the object at path
// the way gdb does: by build ID under debugRoot/.build-id, then by
// .gnu_debuglink next to the file, in its .debug directory, and under
// debugRoot. It returns nil when there is none.
func findDebugFile(path string, f *elf.File) *elf.File {
	if id := buildID(f); len(id) >= 2 {
		h := hex.EncodeToString(id)
		if df := openDebug(filepath.Join(debugRoot, ".build-id", h[:2], h[2:]+".debug"), path, func(df *elf.File) bool {
			return bytes.Equal(buildID(df), id)
		}); df != nil {
			return df
		}
	}
	name, crc, ok := debugLink(f)
	if !ok {
		return nil
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		real = path
	}
	dir := filepath.Dir(real)
	for _, cand := range []string{
		filepath.Join(dir, name),
		filepath.Join(dir, ".debug", name),
		filepath.Join(debugRoot, dir, name),
	} {
		if df := openDebug(cand, real, func(*elf.File) bool { return fileCRC(cand) == crc }); df != nil {
			return df
		}
	}
	return nil
}

// openDebug opens cand as a debug file for self if it is a different
// file, an ELF file with symbols or DWARF, and passes check.
func openDebug(cand, self string, check func(*elf.File) bool) *elf.File {
	st, err := os.Stat(cand)
	if err != nil {
		return nil
	}
	if sst, err := os.Stat(self); err == nil && os.SameFile(st, sst) {
		return nil
	}
	df, err := elf.Open(cand)
	if err != nil {
		return nil
	}
	if (df.Section(".symtab") == nil && df.Section(".debug_info") == nil) || !check(df) {
		df.Close()
		return nil
	}
	return df
}

// buildID returns the GNU build ID note's descriptor.
func buildID(f *elf.File) []byte {
	sec := f.Section(".note.gnu.build-id")
	if sec == nil {
		return nil
	}
	data, err := sec.Data()
	if err != nil || len(data) < 16 {
		return nil
	}
	namesz := binary.LittleEndian.Uint32(data[0:])
	descsz := binary.LittleEndian.Uint32(data[4:])
	start := 12 + (uint64(namesz)+3)&^3
	if start+uint64(descsz) > uint64(len(data)) {
		return nil
	}
	return data[start : start+uint64(descsz)]
}

// debugLink returns the file name and CRC32 of .gnu_debuglink.
func debugLink(f *elf.File) (string, uint32, bool) {
	sec := f.Section(".gnu_debuglink")
	if sec == nil {
		return "", 0, false
	}
	data, err := sec.Data()
	if err != nil {
		return "", 0, false
	}
	n := bytes.IndexByte(data, 0)
	if n <= 0 {
		return "", 0, false
	}
	off := (n + 4) &^ 3
	if off+4 > len(data) {
		return "", 0, false
	}
	return filepath.Base(string(data[:n])), binary.LittleEndian.Uint32(data[off:]), true
}

func fileCRC(path string) uint32 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	h := crc32.NewIEEE()
	if _, err := io.Copy(h, f); err != nil {
		return 0
	}
	return h.Sum32()
}
