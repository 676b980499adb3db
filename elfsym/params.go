//go:build linux && amd64

package elfsym

import (
	"cmp"
	"debug/dwarf"
	"debug/elf"
	"sync"

	"github.com/go-delve/delve/pkg/dwarf/godwarf"
)

// paramTable maps function entry addresses to parameter names, read from
// DWARF one compilation unit at a time, as functions are asked for: a
// probe on one libc function must not pay for decoding all of libc's
// debug info.
type paramTable struct {
	mu     sync.Mutex
	data   *dwarf.Data
	reader *dwarf.Reader
	done   map[dwarf.Offset]bool // compilation units read
	all    bool                  // every unit read
	seeks  int                   // units looked up one at a time so far

	names  map[dwarf.Offset]string
	types  map[dwarf.Offset]dwarf.Offset // parameter entry → its DW_AT_type
	params map[dwarf.Offset][]dwarfParam
	subs   map[dwarf.Offset]dwarfSub
	out    map[uint64][]string
	sigs   map[uint64]dwarfSig // entry address → the types of its signature

	typeCache map[dwarf.Offset]godwarf.Type // for prototype
}

// dwarfSig is a function's signature as DWARF type offsets (0: none, which
// for the return type means void), turned into a probe.Prototype on demand.
type dwarfSig struct {
	params   []dwarf.Offset
	ret      dwarf.Offset
	variadic bool
}

type dwarfParam struct {
	off    dwarf.Offset // the parameter's own entry
	name   string
	origin dwarf.Offset // abstract_origin, when the name lives there
}

type dwarfSub struct {
	origin   dwarf.Offset // abstract_origin or specification
	pcs      [][2]uint64
	ret      dwarf.Offset // DW_AT_type: the return type (0: void, or on the origin)
	variadic bool         // has DW_TAG_unspecified_parameters
}

// dwarfFile returns the ELF file holding the object's DWARF, or nil.
func (o *object) dwarfFile() *elf.File {
	for _, f := range []*elf.File{o.elf, o.debug} {
		if f != nil && (f.Section(".debug_info") != nil || f.Section(".zdebug_info") != nil) {
			return f
		}
	}
	return nil
}

// paramsAt returns the parameter names, in argument order, of the
// function starting at addr, from DWARF; nil when unknown.
func (o *object) paramsAt(addr uint64) []string {
	o.paramsOnce.Do(func() {
		if f := o.dwarfFile(); f != nil {
			if d, err := loadDWARF(f); err == nil {
				o.params = &paramTable{
					data: d, reader: d.Reader(), done: map[dwarf.Offset]bool{},
					names: map[dwarf.Offset]string{}, params: map[dwarf.Offset][]dwarfParam{},
					subs: map[dwarf.Offset]dwarfSub{}, out: map[uint64][]string{},
					types: map[dwarf.Offset]dwarf.Offset{}, sigs: map[uint64]dwarfSig{},
				}
			}
		}
	})
	if o.params == nil {
		return nil
	}
	return o.params.lookup(addr)
}

// loadParams reads every compilation unit at once, cheaper than one at a
// time when most functions of the object are wanted.
func (o *object) loadParams() {
	o.paramsAt(0)
	if t := o.params; t != nil {
		t.mu.Lock()
		defer t.mu.Unlock()
		if !t.all {
			t.all = true
			t.reader.Seek(0)
			t.walk(false)
		}
	}
}

// maxUnitSeeks is how many functions are looked up by their unit before
// every unit is read at once.
const maxUnitSeeks = 64

func (t *paramTable) lookup(addr uint64) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if p, ok := t.out[addr]; ok || t.all {
		return p
	}
	if t.seeks++; t.seeks > maxUnitSeeks {
		// Many lookups (a trace of hundreds of functions): one walk of
		// every unit costs less than a search of the units per lookup.
		t.all = true
		t.reader.Seek(0)
		t.walk(false)
		return t.out[addr]
	}
	cu, err := t.reader.SeekPC(addr)
	if err != nil || cu == nil || t.done[cu.Offset] {
		return t.out[addr]
	}
	t.done[cu.Offset] = true
	t.walk(true)
	return t.out[addr]
}

// loadDWARF loads only the sections that entries and their ranges need,
// leaving out the large line and location tables, which would otherwise
// all be decompressed.
func loadDWARF(f *elf.File) (*dwarf.Data, error) {
	if f.Section(".zdebug_info") != nil {
		return f.DWARF()
	}
	sec := func(name string) ([]byte, error) {
		s := f.Section(name)
		if s == nil || s.Type == elf.SHT_NOBITS {
			return nil, nil
		}
		return s.Data()
	}
	var b [5][]byte
	for i, name := range []string{".debug_abbrev", ".debug_aranges", ".debug_info", ".debug_ranges", ".debug_str"} {
		var err error
		if b[i], err = sec(name); err != nil {
			return nil, err
		}
	}
	d, err := dwarf.New(b[0], b[1], nil, b[2], nil, nil, b[3], b[4])
	if err != nil {
		return nil, err
	}
	for _, name := range []string{".debug_addr", ".debug_rnglists", ".debug_str_offsets", ".debug_line_str"} {
		data, err := sec(name)
		if err != nil {
			return nil, err
		}
		if data != nil {
			if err := d.AddSection(name, data); err != nil {
				return nil, err
			}
		}
	}
	return d, nil
}

// walk reads entries from the reader's position: the children of one
// compilation unit (after SeekPC) when unit is set, else everything.
// Out-of-line copies of inlined functions and C++ definitions name their
// parameters through DW_AT_abstract_origin / DW_AT_specification; both are
// followed. Go result parameters (DW_AT_variable_parameter) are left out.
func (t *paramTable) walk(unit bool) {
	newSubs := map[dwarf.Offset]bool{}
	var stack []dwarf.Offset // enclosing subprogram per depth (0: none)
	if unit {
		stack = append(stack, 0)
	}
	r := t.reader
	for !unit || len(stack) > 0 {
		e, err := r.Next()
		if err != nil || e == nil {
			break
		}
		if e.Tag == 0 {
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			continue
		}
		var parent dwarf.Offset
		if len(stack) > 0 {
			parent = stack[len(stack)-1]
		}
		switch e.Tag {
		case dwarf.TagCompileUnit, dwarf.TagPartialUnit:
			if t.done[e.Offset] {
				r.SkipChildren()
				continue
			}
			t.done[e.Offset] = true
		case dwarf.TagFormalParameter:
			if parent == 0 {
				break
			}
			if v, _ := e.Val(dwarf.AttrVarParam).(bool); v {
				break
			}
			p := dwarfParam{off: e.Offset}
			p.name, _ = e.Val(dwarf.AttrName).(string)
			p.origin, _ = e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
			if p.name != "" {
				t.names[e.Offset] = p.name
			}
			if typ, ok := e.Val(dwarf.AttrType).(dwarf.Offset); ok {
				t.types[e.Offset] = typ
			}
			t.params[parent] = append(t.params[parent], p)
		case dwarf.TagUnspecifiedParameters:
			if sub, ok := t.subs[parent]; ok && parent != 0 {
				sub.variadic = true
				t.subs[parent] = sub
			}
		case dwarf.TagSubprogram:
			s := dwarfSub{}
			s.origin, _ = e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
			if s.origin == 0 {
				s.origin, _ = e.Val(dwarf.AttrSpecification).(dwarf.Offset)
			}
			s.pcs, _ = t.data.Ranges(e)
			s.ret, _ = e.Val(dwarf.AttrType).(dwarf.Offset)
			t.subs[e.Offset] = s
			newSubs[e.Offset] = true
		}
		if !e.Children {
			continue
		}
		switch e.Tag {
		case dwarf.TagCompileUnit, dwarf.TagPartialUnit, dwarf.TagNamespace, dwarf.TagModule:
			stack = append(stack, 0)
		case dwarf.TagSubprogram:
			stack = append(stack, e.Offset)
		default:
			// Types, lexical blocks, inlined copies: nothing of ours inside.
			r.SkipChildren()
		}
	}
	for off := range newSubs {
		t.finish(off)
	}
}

// finish records the parameter names of the subprogram at off under each
// of its entry addresses.
func (t *paramTable) finish(off dwarf.Offset) {
	s := t.subs[off]
	if len(s.pcs) == 0 {
		return
	}
	ps := t.params[off]
	// An out-of-line copy without its own parameter entries takes the
	// abstract instance's (or the declaration's).
	for o, hops := s.origin, 0; len(ps) == 0 && o != 0 && hops < 4; hops++ {
		ps = t.params[o]
		o = t.subs[o].origin
	}
	list := make([]string, len(ps))
	sig := dwarfSig{params: make([]dwarf.Offset, len(ps)), ret: s.ret, variadic: s.variadic}
	for i, p := range ps {
		list[i] = p.name
		if list[i] == "" {
			list[i] = t.names[p.origin]
		}
		if sig.params[i] = t.types[p.off]; sig.params[i] == 0 {
			sig.params[i] = t.types[p.origin]
		}
	}
	// The return type and the "..." live on the abstract instance (or
	// the declaration) when this is a copy of it.
	for o, hops := s.origin, 0; o != 0 && hops < 4; hops++ {
		sig.ret = cmp.Or(sig.ret, t.subs[o].ret)
		sig.variadic = sig.variadic || t.subs[o].variadic
		o = t.subs[o].origin
	}
	for _, pc := range s.pcs {
		if old, dup := t.out[pc[0]]; !dup || len(old) == 0 {
			t.out[pc[0]] = list
			t.sigs[pc[0]] = sig
		}
	}
}
