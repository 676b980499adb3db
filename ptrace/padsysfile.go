//go:build linux && amd64

package ptrace

import (
	"bytes"
	"debug/elf"
	"os"
	"sync"
	"syscall"

	"github.com/utap/utap/elfsym"
	"github.com/utap/utap/ssol"
)

// fileSyscalls is what the scan of an object file's `syscall`
// instructions finds in the file, the same in every process image that
// maps it (libc in each command a -f trace sees): its executable
// segments and, in each, every `syscall` with its landing, its number
// and the file's verdict on moving the instructions before it. Decoding
// them was a fifth of placing an image's pads; kept per file (path,
// device, inode, size, modification time), the scan reads the file once.
type fileSyscalls struct {
	segs []fileSeg
}

// fileSeg is one executable PT_LOAD segment and its `syscall`s.
type fileSeg struct {
	prog  elf.ProgHeader
	sites []fileSyscall
}

// fileSyscall is one `syscall` of a file at link-time address v: the
// file's bytes from its landing (from) to it and its number (known).
type fileSyscall struct {
	v, from uint64
	code    []byte
	nr      int
	known   bool
	plan    *string // movable: nil not yet asked, else why not ("" if it is)
}

// movable says why the file's instructions before s cannot be moved, ""
// if they can: for a static number ssol.PlanSyscall's verdict, else
// PlanSyscallAny's; asked once.
func (s *fileSyscall) movable() string {
	syscallFiles.Lock()
	defer syscallFiles.Unlock()
	if s.plan == nil {
		var err error
		if s.known {
			_, _, err = ssol.PlanSyscall(s.code, s.from, s.v, nil)
		} else {
			_, _, err = ssol.PlanSyscallAny(s.code, s.from, s.v)
		}
		why := ""
		if err != nil {
			why = err.Error()
		}
		s.plan = &why
	}
	return *s.plan
}

var syscallFiles = struct {
	sync.Mutex
	m map[fileID]*fileSyscalls
}{m: map[fileID]*fileSyscalls{}}

// fileID names one version of a file.
type fileID struct {
	path       string
	dev, inode uint64
	size       int64
	mtime      syscall.Timespec
}

// scanFile is the scan of path's `syscall`s, from the cache when the file
// is the one scanned before.
func scanFile(path string) (*fileSyscalls, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	id := fileID{path: path, size: fi.Size()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		id.dev, id.inode, id.mtime = st.Dev, st.Ino, st.Mtim
	}
	syscallFiles.Lock()
	fs := syscallFiles.m[id]
	syscallFiles.Unlock()
	if fs != nil {
		return fs, nil
	}
	if fs, err = readSyscalls(path); err != nil {
		return nil, err
	}
	syscallFiles.Lock()
	syscallFiles.m[id] = fs
	syscallFiles.Unlock()
	return fs, nil
}

// readSyscalls scans path's executable segments for `syscall`s (0f 05)
// that start at an instruction reached from a landing.
func readSyscalls(path string) (*fileSyscalls, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	land, err := elfsym.ObjectLandings(path)
	if err != nil {
		return nil, errLandings{err}
	}
	fs := &fileSyscalls{}
	for _, prog := range f.Progs {
		if prog.Type != elf.PT_LOAD || prog.Flags&elf.PF_X == 0 {
			continue
		}
		data := make([]byte, prog.Filesz)
		if _, err := prog.ReadAt(data, 0); err != nil {
			return nil, err
		}
		seg := fileSeg{prog: prog.ProgHeader}
		for i := 0; ; i++ {
			k := bytes.Index(data[i:], []byte{0x0f, 0x05})
			if k < 0 {
				break
			}
			i += k
			v := prog.Vaddr + uint64(i)
			from, ok := land.Before(v)
			if !ok || from < prog.Vaddr {
				continue
			}
			code := data[from-prog.Vaddr : i+2]
			nr, known, err := ssol.SyscallAt(code, from, v)
			if err != nil {
				continue // not an instruction
			}
			if !known {
				nr = -1
			}
			seg.sites = append(seg.sites, fileSyscall{v: v, from: from, code: bytes.Clone(code), nr: nr, known: known})
		}
		fs.segs = append(fs.segs, seg)
	}
	return fs, nil
}

// errLandings is a failure to find where an object's code jumps.
type errLandings struct{ err error }

func (e errLandings) Error() string { return e.err.Error() }
func (e errLandings) Unwrap() error { return e.err }
