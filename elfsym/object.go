//go:build linux && amd64

package elfsym

import (
	"bytes"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
)

// object is one parsed ELF file: its loadable segments, function symbols
// and PLT stubs. Parameter names from DWARF are read on first use only.
type object struct {
	path  string
	file  *os.File
	elf   *elf.File
	loads []*elf.Prog // PT_LOAD segments, in file order
	isGo  bool
	// debug is the separate debug-info file, or nil when there is none.
	debug *elf.File

	symOnce sync.Once
	symErr  error
	funcs   []fsym // sorted by address
	plt     []fsym // sorted by address

	// goEntries holds the entry addresses of Go functions (from pclntab).
	goEntries map[uint64]bool

	paramsOnce sync.Once
	params     *paramTable

	irelOnce sync.Once
	irel     map[uint64]uint64 // IFUNC resolver -> GOT slot

	codeMu sync.Mutex
	code   map[*elf.Prog][]byte

	usdtOnce sync.Once // usdt.go
	usdt     []usdtProbe
	usdtErr  error
	addrOnce sync.Once
	addrs    map[string]uint64 // every defined symbol's address, for operands

	landState // landings.go

	nameMu  sync.Mutex
	nameIdx [2]map[string][]int // funcs, plt: by name (match.go)
}

// fsym is one function symbol or PLT stub of an object.
type fsym struct {
	name   string
	addr   uint64
	size   uint64
	global bool // exported, STB_GLOBAL or STB_WEAK (preferred over local aliases)
	weak   bool // STB_WEAK
	ifunc  bool // STT_GNU_IFUNC: addr is the resolver, not the implementation
	plt    bool
	// demangled is the source name of a C++ or Rust symbol (demangle.go).
	demangled string
}

// openObject parses path. A file that is not ELF is reported as such.
func openObject(path string) (*object, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, openError(path, err)
	}
	var magic [4]byte
	if _, err := f.ReadAt(magic[:], 0); err != nil || !bytes.Equal(magic[:], []byte(elf.ELFMAG)) {
		f.Close()
		return nil, errorf(ErrNotELF, "%q is not an ELF file", path)
	}
	ef, err := elf.NewFile(f)
	if err != nil {
		f.Close()
		return nil, &msgError{msg: fmt.Sprintf("%q is not a valid ELF file: %v", path, err), err: ErrNotELF}
	}
	if ef.Class != elf.ELFCLASS64 || ef.Machine != elf.EM_X86_64 {
		f.Close()
		return nil, errorf(ErrNotELF, "%q is a %v %v ELF file; only x86-64 is supported", path, ef.Class, ef.Machine)
	}
	o := &object{path: path, file: f, elf: ef, code: map[*elf.Prog][]byte{}}
	for _, p := range ef.Progs {
		if p.Type == elf.PT_LOAD {
			o.loads = append(o.loads, p)
		}
	}
	o.isGo = IsGo(ef)
	return o, nil
}

// IsGo says whether f is a Go program (or a Go shared object): it has
// the Go build info or pc-line table, which stripping keeps.
func IsGo(f *elf.File) bool {
	return f.Section(".go.buildinfo") != nil || f.Section(".gopclntab") != nil
}

// symbols reads the object's function symbols and PLT stubs on first use:
// many objects of a process are opened only to be told apart.
func (o *object) symbols() error {
	o.symOnce.Do(func() {
		if err := o.loadSymbols(); err != nil {
			o.symErr = fmt.Errorf("reading symbols of %s: %w", o.path, err)
		}
	})
	return o.symErr
}

func (o *object) close() {
	o.file.Close()
	if o.debug != nil {
		o.debug.Close()
	}
}

// segment returns the PT_LOAD segment whose file-backed part holds addr.
func (o *object) segment(addr uint64) *elf.Prog {
	for _, p := range o.loads {
		if addr >= p.Vaddr && addr < p.Vaddr+p.Filesz {
			return p
		}
	}
	return nil
}

// fileOffset converts a link-time address to its offset in the file.
func (o *object) fileOffset(addr uint64) (uint64, bool) {
	p := o.segment(addr)
	if p == nil {
		return 0, false
	}
	return addr - p.Vaddr + p.Off, true
}

// codeAt returns up to n bytes of the file at link-time address addr,
// fewer at the end of the segment. Executable segments are read once.
func (o *object) codeAt(addr, n uint64) ([]byte, error) {
	p := o.segment(addr)
	if p == nil {
		return nil, fmt.Errorf("address %#x is not in a loaded segment of %s", addr, o.path)
	}
	if p.Flags&elf.PF_X == 0 {
		return nil, fmt.Errorf("address %#x is not in an executable segment of %s", addr, o.path)
	}
	o.codeMu.Lock()
	b, ok := o.code[p]
	if !ok {
		b = make([]byte, p.Filesz)
		if _, err := o.file.ReadAt(b, int64(p.Off)); err != nil && err != io.EOF {
			o.codeMu.Unlock()
			return nil, fmt.Errorf("reading %s: %w", o.path, err)
		}
		o.code[p] = b
	}
	o.codeMu.Unlock()
	start := addr - p.Vaddr
	end := min(start+n, uint64(len(b)))
	return b[start:end], nil
}

// Code returns n bytes of the executable segment of the ELF file path at
// link-time address addr (fewer at the segment's end), through the cache
// of parsed objects: a listing reads many functions of one file.
func Code(path string, addr, n uint64) ([]byte, error) {
	o, err := cachedObject(path, path)
	if err != nil {
		return nil, err
	}
	return o.codeAt(addr, n)
}

// covering returns the function symbol whose extent holds addr.
func (o *object) covering(addr uint64) (fsym, bool) {
	var best fsym
	found := false
	for _, s := range o.funcs {
		if s.addr > addr {
			break
		}
		if addr < s.addr+max(s.size, 1) {
			if !found || better(s, best) {
				best, found = s, true
			}
		}
	}
	return best, found
}

// better says whether a is a better name than b for the same address:
// not a compatibility alias (a symbol version after one @, llseek@GLIBC_2.2.5
// beside lseek), then exported over local, then fewer leading underscores
// (glibc's public names are weak aliases of global __names: lseek of
// __lseek), then STB_GLOBAL over weak (strchr over index, memcmp over
// bcmp), then shorter.
func better(a, b fsym) bool {
	if ca, cb := compatAlias(a.name), compatAlias(b.name); ca != cb {
		return cb
	}
	if a.global != b.global {
		return a.global
	}
	ua, ub := underscores(a.name), underscores(b.name)
	if ua != ub {
		return ua < ub
	}
	if a.weak != b.weak {
		return b.weak
	}
	if len(a.name) != len(b.name) {
		return len(a.name) < len(b.name)
	}
	return a.name < b.name
}

// compatAlias: a symbol's non-default version (name@VERSION, where the
// default is name@@VERSION).
func compatAlias(name string) bool {
	i := strings.IndexByte(name, '@')
	return i >= 0 && !strings.HasPrefix(name[i:], "@@")
}

func underscores(s string) int {
	n := 0
	for n < len(s) && s[n] == '_' {
		n++
	}
	return n
}
