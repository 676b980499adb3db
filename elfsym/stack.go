//go:build linux && amd64

package elfsym

import (
	"cmp"
	"debug/dwarf"
	"debug/elf"
	"path/filepath"
	"slices"
	"sort"
	"sync"

	"github.com/utap/utap/internal/proc"
	"github.com/utap/utap/internal/ustack"
	"github.com/utap/utap/probe"
)

// Symbolizer names the frames of events' user stacks (-k), for both
// engines: the object mapped at each address (/proc/PID/maps, cached per
// process), the function symbol covering it and the offset from its
// start, and the source line when the object has DWARF line info. Objects
// are parsed once (the package's cache). Safe for concurrent use.
type Symbolizer struct {
	maps ustack.Maps
	mu   sync.Mutex
	objs map[string]*symObject
}

// symObject is one object as the symbolizer sees it.
type symObject struct {
	o     *object // nil: not an ELF file we can read
	loads []elf.ProgHeader
	lines []lineRow // sorted by addr; nil: no line info
}

type lineRow struct {
	addr uint64
	file string
	line int
}

// Forget drops what is known of pid's mappings (after an exec).
func (s *Symbolizer) Forget(pid int) { s.maps.Forget(pid) }

// Symbolize fills in every frame of stack for process pid. Frames after
// the first are return addresses: their function and line are those of
// the call (the address before), their offset the return address's own.
func (s *Symbolizer) Symbolize(pid int, stack []probe.Frame) {
	for i := range stack {
		f := &stack[i]
		m, ok := s.maps.Find(pid, f.Addr)
		if !ok || m.Path == "" {
			continue
		}
		f.Object = m.Path
		so := s.object(m.Path)
		if so == nil || so.o == nil {
			continue
		}
		bias, ok := proc.Bias(m, so.loads)
		if !ok {
			continue
		}
		at := f.Addr - bias
		look := at
		if i > 0 && look > 0 {
			look--
		}
		if fn, ok := so.o.symbolAt(look); ok {
			f.Func = fn.name
			if fn.demangled != "" {
				f.Func = fn.demangled
			}
			f.Offset = at - fn.addr
		}
		if r, ok := so.lineAt(look); ok {
			f.File, f.Line = r.file, r.line
		}
	}
}

func (s *Symbolizer) object(path string) *symObject {
	s.mu.Lock()
	defer s.mu.Unlock()
	if so, ok := s.objs[path]; ok {
		return so
	}
	if s.objs == nil {
		s.objs = map[string]*symObject{}
	}
	so := &symObject{}
	s.objs[path] = so
	o, err := cachedObject(path, path)
	if err != nil || o.symbols() != nil {
		return so
	}
	so.o = o
	for _, p := range o.loads {
		so.loads = append(so.loads, p.ProgHeader)
	}
	if f := o.dwarfFile(); f != nil {
		if d, err := f.DWARF(); err == nil {
			so.lines = lineTable(d)
		}
	}
	return so
}

// symbolAt returns the function symbol covering link-time address addr,
// the best named of its aliases.
func (o *object) symbolAt(addr uint64) (fsym, bool) {
	fs := o.funcs
	i := sort.Search(len(fs), func(i int) bool { return fs[i].addr > addr })
	var best fsym
	found := false
	// Symbols starting at or before addr, nearest first; sizes may nest
	// (a local alias inside a larger function), so look a little back.
	for j := i - 1; j >= 0 && j >= i-64; j-- {
		s := fs[j]
		if addr < s.addr+max(s.size, 1) {
			if !found || s.addr > best.addr || (s.addr == best.addr && better(s, best)) {
				best, found = s, true
			}
		}
		if found && s.addr < best.addr {
			break
		}
	}
	return best, found
}

// lineAt returns the line table row holding addr.
func (so *symObject) lineAt(addr uint64) (lineRow, bool) {
	ls := so.lines
	i := sort.Search(len(ls), func(i int) bool { return ls[i].addr > addr })
	if i == 0 {
		return lineRow{}, false
	}
	r := ls[i-1]
	if r.line == 0 {
		return lineRow{}, false // an end of sequence
	}
	return r, true
}

// lineTable reads every compilation unit's line program into one table.
func lineTable(d *dwarf.Data) []lineRow {
	var rows []lineRow
	rd := d.Reader()
	for {
		e, err := rd.Next()
		if err != nil || e == nil {
			break
		}
		if e.Tag != dwarf.TagCompileUnit {
			rd.SkipChildren()
			continue
		}
		lr, err := d.LineReader(e)
		rd.SkipChildren()
		if err != nil || lr == nil {
			continue
		}
		var le dwarf.LineEntry
		for {
			if lr.Next(&le) != nil {
				break // io.EOF, or a malformed program: what was read stays
			}
			r := lineRow{addr: le.Address, line: le.Line}
			if le.EndSequence {
				r.line = 0
			} else if le.File != nil {
				r.file = filepath.Base(le.File.Name)
			}
			rows = append(rows, r)
		}
	}
	// An end of sequence sorts before a row starting at the same address.
	// Typed, not sort.SliceStable's reflection: a python's table has
	// millions of rows.
	slices.SortStableFunc(rows, func(a, b lineRow) int {
		if a.addr != b.addr {
			return cmp.Compare(a.addr, b.addr)
		}
		switch {
		case a.line == 0 && b.line != 0:
			return -1
		case b.line == 0 && a.line != 0:
			return 1
		}
		return 0
	})
	return rows
}

// Warm loads the symbols and line tables of t's objects (a process's
// mapped objects, or an executable and the libraries the loader would
// map) ahead of the first stack: a large object's line table takes a
// while to build, and a trace's reader stalled on it lets the engine's
// buffer overflow. Symbolize waits for what Warm is loading.
func (s *Symbolizer) Warm(t Target) {
	ld, err := newLoader(t)
	if err != nil {
		return
	}
	for _, p := range ld.objects() {
		s.object(p)
	}
}
