//go:build linux && amd64

package elfsym

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"slices"
	"sort"
	"sync"

	"github.com/go-delve/delve/pkg/dwarf/frame"
	"github.com/utap/utap/internal/x86"
)

// Landings is the set of an object's code addresses where control may
// arrive other than by falling through from the instruction before: a
// jump of 5 bytes written over an instruction boundary in that set would
// cut an instruction some other code jumps to. Functions are not enough:
// glibc's __mempcpy_* jump to __memmove_*+3, .cold parts and hand-written
// assembly share tails. So the set is object-wide:
//   - the target of every direct branch and every RIP-relative operand
//     that falls in code (a lea of a label takes a code address), decoded
//     once per object, restarted at every boundary below;
//   - every symbol's start and every FDE's start (.eh_frame);
//   - every code address a dynamic relocation makes (RELATIVE, IRELATIVE
//     and symbol relocations), and in a position-dependent executable,
//     every aligned word of its data that holds a code address (absolute
//     jump tables and function pointers need no relocation there).
//
// What it cannot see: targets computed at run time from tables of
// relative offsets (a PIC switch) land inside the function that holds the
// table, never in another function's first bytes; code written at run
// time is not in the file. Callers pad only function entries, where those
// two cannot reach.
type Landings struct {
	addrs []uint64 // link-time, sorted, unique
}

// Inside returns the first landing strictly between lo and hi.
func (l *Landings) Inside(lo, hi uint64) (uint64, bool) {
	i := sort.Search(len(l.addrs), func(i int) bool { return l.addrs[i] > lo })
	if i < len(l.addrs) && l.addrs[i] < hi {
		return l.addrs[i], true
	}
	return 0, false
}

// Has says whether addr is a landing.
func (l *Landings) Has(addr uint64) bool {
	_, in := l.Inside(addr-1, addr+1)
	return in
}

// Len is the number of landings (for tests and benchmarks).
func (l *Landings) Len() int { return len(l.addrs) }

// ObjectLandings returns the landings of the ELF file at path, computed
// once per file per process and kept on disk by build id (landcache.go):
// decoding all of libc takes a quarter of a second.
func ObjectLandings(path string) (*Landings, error) {
	o, err := cachedObject(path, path)
	if err != nil {
		return nil, err
	}
	o.landOnce.Do(func() { o.land, o.landErr = o.loadLandings() })
	return o.land, o.landErr
}

var errNoCode = errors.New("no executable code")

func (o *object) loadLandings() (*Landings, error) {
	id := buildID(o.elf)
	if l := readLandCache(id); l != nil {
		return l, nil
	}
	l, err := o.computeLandings()
	if err == nil {
		writeLandCache(id, l)
	}
	return l, err
}

// codeRange is one executable section (or segment, without sections).
type codeRange struct {
	addr uint64
	data []byte
}

func (o *object) codeRanges() ([]codeRange, error) {
	var out []codeRange
	for _, s := range o.elf.Sections {
		if s.Flags&elf.SHF_EXECINSTR == 0 || s.Type != elf.SHT_PROGBITS || s.Flags&elf.SHF_ALLOC == 0 {
			continue
		}
		b, err := s.Data()
		if err != nil {
			return nil, err
		}
		out = append(out, codeRange{s.Addr, b})
	}
	if len(out) == 0 {
		for _, p := range o.loads {
			if p.Flags&elf.PF_X == 0 {
				continue
			}
			b := make([]byte, p.Filesz)
			if _, err := p.ReadAt(b, 0); err != nil {
				return nil, err
			}
			out = append(out, codeRange{p.Vaddr, b})
		}
	}
	if len(out) == 0 {
		return nil, errNoCode
	}
	return out, nil
}

func (o *object) computeLandings() (*Landings, error) {
	code, err := o.codeRanges()
	if err != nil {
		return nil, err
	}
	inCode := func(a uint64) bool {
		for _, c := range code {
			if a >= c.addr && a < c.addr+uint64(len(c.data)) {
				return true
			}
		}
		return false
	}
	var set []uint64
	add := func(a uint64) {
		if inCode(a) {
			set = append(set, a)
		}
	}
	// Boundaries first: they are landings, and the decoding restarts at
	// each, so a byte of data in code cannot desynchronise it for long.
	for _, a := range o.symbolStarts() {
		add(a)
	}
	for _, a := range o.fdeStarts() {
		add(a)
	}
	o.relocTargets(add)
	if o.elf.Type == elf.ET_EXEC {
		o.dataWords(add)
	}
	bounds := slices.Clone(set)
	for _, c := range code {
		bounds = append(bounds, c.addr)
	}
	slices.Sort(bounds)
	bounds = slices.Compact(bounds)
	for _, c := range code {
		end := c.addr + uint64(len(c.data))
		i := sort.Search(len(bounds), func(i int) bool { return bounds[i] >= c.addr })
		for ; i < len(bounds) && bounds[i] < end; i++ {
			stop := end
			if i+1 < len(bounds) && bounds[i+1] < end {
				stop = bounds[i+1]
			}
			x86.Targets(c.data[bounds[i]-c.addr:stop-c.addr], bounds[i], add)
		}
	}
	slices.Sort(set)
	return &Landings{addrs: slices.Compact(set)}, nil
}

// symbolStarts is every symbol's value, of any type (assembly labels are
// NOTYPE), from the object, its dynamic table and its debug file.
func (o *object) symbolStarts() []uint64 {
	var out []uint64
	take := func(syms []elf.Symbol, _ error) {
		for _, s := range syms {
			if s.Section != elf.SHN_UNDEF && s.Section < elf.SHN_LORESERVE && s.Value != 0 {
				out = append(out, s.Value)
			}
		}
	}
	take(o.elf.Symbols())
	take(o.elf.DynamicSymbols())
	if o.symbols() == nil && o.debug != nil {
		take(o.debug.Symbols())
	}
	return out
}

// fdeStarts is the initial location of every FDE in .eh_frame.
func (o *object) fdeStarts() []uint64 {
	sec := o.elf.Section(".eh_frame")
	if sec == nil {
		return nil
	}
	data, err := sec.Data()
	if err != nil {
		return nil
	}
	fdes, err := frame.Parse(data, binary.LittleEndian, 0, 8, sec.Addr)
	if err != nil {
		return nil
	}
	out := make([]uint64, 0, len(fdes))
	for _, f := range fdes {
		out = append(out, f.Begin())
	}
	return out
}

// relocTargets adds the addresses dynamic relocations write into data.
func (o *object) relocTargets(add func(uint64)) {
	var dyn []elf.Symbol
	dynOK := false
	for _, s := range o.elf.Sections {
		if s.Type != elf.SHT_RELA {
			continue
		}
		data, err := s.Data()
		if err != nil {
			continue
		}
		var r elf.Rela64
		rd := bytes.NewReader(data)
		for binary.Read(rd, binary.LittleEndian, &r) == nil {
			switch t := elf.R_X86_64(elf.R_TYPE64(r.Info)); t {
			case elf.R_X86_64_RELATIVE, elf.R_X86_64_IRELATIVE:
				add(uint64(r.Addend))
			case elf.R_X86_64_64, elf.R_X86_64_GLOB_DAT, elf.R_X86_64_JMP_SLOT:
				if !dynOK {
					dyn, _ = o.elf.DynamicSymbols()
					dynOK = true
				}
				// Symbol indices count the null symbol, which
				// DynamicSymbols leaves out.
				if i := int(elf.R_SYM64(r.Info)) - 1; i >= 0 && i < len(dyn) && dyn[i].Section != elf.SHN_UNDEF {
					add(dyn[i].Value + uint64(r.Addend))
				}
			}
		}
	}
}

// dataWords adds every aligned 8-byte word of a position-dependent
// executable's data that holds a code address: its jump tables and
// function pointers are absolute and need no relocation.
func (o *object) dataWords(add func(uint64)) {
	for _, s := range o.elf.Sections {
		if s.Flags&elf.SHF_ALLOC == 0 || s.Flags&elf.SHF_EXECINSTR != 0 || s.Type != elf.SHT_PROGBITS {
			continue
		}
		data, err := s.Data()
		if err != nil {
			continue
		}
		for i := (8 - int(s.Addr%8)) % 8; i+8 <= len(data); i += 8 {
			add(binary.LittleEndian.Uint64(data[i:]))
		}
	}
}

// landState is the object's part for ObjectLandings.
type landState struct {
	landOnce sync.Once
	land     *Landings
	landErr  error
}

// Before returns the last landing strictly below addr.
func (l *Landings) Before(addr uint64) (uint64, bool) {
	i := sort.Search(len(l.addrs), func(i int) bool { return l.addrs[i] >= addr })
	if i == 0 {
		return 0, false
	}
	return l.addrs[i-1], true
}
