//go:build linux && amd64

package elfsym

import (
	"sync"

	"golang.org/x/sys/unix"
)

// Parsed objects are kept for the life of the process, keyed by the
// file's identity: a tracer following forks and execs resolves the same
// libc again and again, and its symbols and DWARF are the slow part.
// A file rewritten in place gets a new mtime or size, hence a new entry.
var cache struct {
	sync.Mutex
	objs map[cacheKey]*object
}

type cacheKey struct {
	name          string
	dev, ino      uint64
	size          int64
	mtime, mctime int64
}

// cachedObject opens the file at src, named path, or returns the object
// already parsed for the same file.
func cachedObject(src, path string) (*object, error) {
	var st unix.Stat_t
	if err := unix.Stat(src, &st); err != nil {
		o, err := openObject(src)
		if err == nil {
			o.path = path
		}
		return o, err
	}
	k := cacheKey{name: path, dev: st.Dev, ino: st.Ino, size: st.Size, mtime: st.Mtim.Nano(), mctime: st.Ctim.Nano()}
	cache.Lock()
	defer cache.Unlock()
	if o, ok := cache.objs[k]; ok {
		return o, nil
	}
	o, err := openObject(src)
	if err != nil {
		return nil, err
	}
	o.path = path
	if cache.objs == nil {
		cache.objs = map[cacheKey]*object{}
	}
	cache.objs[k] = o
	return o, nil
}

// dropCache forgets every parsed object (tests measure cold resolution).
func dropCache() {
	cache.Lock()
	defer cache.Unlock()
	for _, o := range cache.objs {
		o.close()
	}
	cache.objs = nil
}
