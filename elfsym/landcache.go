//go:build linux && amd64

package elfsym

import (
	"encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
)

// The landings of an object are kept on disk under the user's cache
// directory, named by the object's GNU build id: the same libc is decoded
// once per machine, not once per trace. A file without a build id is
// decoded every time. A cache that cannot be read or written is only
// slower: every error here is ignored.

const landCacheVersion = "v1"

func landCachePath(id []byte) string {
	if len(id) < 8 {
		return ""
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "utap", "landings-"+landCacheVersion, hex.EncodeToString(id))
}

// readLandCache returns the cached landings, nil when there are none.
// The file is the deltas of the sorted addresses as uvarints.
func readLandCache(id []byte) *Landings {
	p := landCachePath(id)
	if p == "" {
		return nil
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil
	}
	var addrs []uint64
	var prev uint64
	for len(b) > 0 {
		d, n := binary.Uvarint(b)
		if n <= 0 {
			return nil
		}
		prev += d
		addrs = append(addrs, prev)
		b = b[n:]
	}
	return &Landings{addrs: addrs}
}

func writeLandCache(id []byte, l *Landings) {
	p := landCachePath(id)
	if p == "" || os.MkdirAll(filepath.Dir(p), 0o755) != nil {
		return
	}
	var b []byte
	var prev uint64
	for _, a := range l.addrs {
		b = binary.AppendUvarint(b, a-prev)
		prev = a
	}
	// Written aside and renamed: a reader never sees half a file.
	tmp, err := os.CreateTemp(filepath.Dir(p), ".landings-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(b)
	if cerr := tmp.Close(); werr != nil || cerr != nil || os.Rename(tmp.Name(), p) != nil {
		os.Remove(tmp.Name())
	}
}
