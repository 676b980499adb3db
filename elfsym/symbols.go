//go:build linux && amd64

package elfsym

import (
	"debug/elf"
	"errors"
	"sort"
)

// loadSymbols fills o.funcs and o.plt from, in order of preference, the
// symbol table (the file's own or its separate debug file's), the dynamic
// symbol table, and for Go binaries the pclntab.
func (o *object) loadSymbols() error {
	if o.elf.Section(".symtab") == nil || o.elf.Section(".debug_info") == nil {
		o.debug = findDebugFile(o.path, o.elf)
	}
	type key struct {
		name string
		addr uint64
	}
	seen := map[key]bool{}
	add := func(syms []elf.Symbol) {
		for _, s := range syms {
			typ := elf.ST_TYPE(s.Info)
			if typ != elf.STT_FUNC && typ != elf.STT_GNU_IFUNC {
				continue
			}
			if s.Section == elf.SHN_UNDEF || s.Value == 0 || s.Name == "" {
				continue
			}
			// A hidden version (memcpy@GLIBC_2.2.5 beside memcpy@@GLIBC_2.14)
			// is kept only for old binaries; "memcpy" means the default one.
			if s.HasVersion && s.VersionIndex.IsHidden() {
				continue
			}
			k := key{s.Name, s.Value}
			if seen[k] {
				continue
			}
			seen[k] = true
			o.funcs = append(o.funcs, fsym{
				name:      s.Name,
				addr:      s.Value,
				size:      s.Size,
				global:    elf.ST_BIND(s.Info) != elf.STB_LOCAL,
				weak:      elf.ST_BIND(s.Info) == elf.STB_WEAK,
				ifunc:     typ == elf.STT_GNU_IFUNC,
				demangled: demangled(s.Name),
			})
		}
	}
	symtab, err := o.elf.Symbols()
	if errors.Is(err, elf.ErrNoSymbols) && o.debug != nil {
		symtab, err = o.debug.Symbols()
	}
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		return err
	}
	add(symtab)
	dynsym, err := o.elf.DynamicSymbols()
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		return err
	}
	add(dynsym)

	if o.isGo {
		gofuncs, err := o.goFuncs()
		if err != nil && len(symtab) == 0 {
			return err
		}
		o.goEntries = make(map[uint64]bool, len(gofuncs))
		for _, g := range gofuncs {
			o.goEntries[g.addr] = true
		}
		if len(symtab) == 0 {
			// Stripped Go binary: the pclntab still names every function.
			for _, g := range gofuncs {
				if k := (key{g.name, g.addr}); !seen[k] {
					seen[k] = true
					o.funcs = append(o.funcs, g)
				}
			}
		}
	}
	sort.SliceStable(o.funcs, func(i, j int) bool { return o.funcs[i].addr < o.funcs[j].addr })

	plt, err := o.pltStubs(dynsym)
	if err != nil {
		return err
	}
	o.plt = plt
	return nil
}
