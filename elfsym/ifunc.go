//go:build linux && amd64

package elfsym

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"

	"github.com/utap/utap/internal/proc"
	"github.com/utap/utap/internal/x86"
	"golang.org/x/arch/x86/x86asm"
)

// An IFUNC symbol (libc's strlen, memcpy...) points at a resolver that
// runs once, at load time, and picks the implementation for this CPU; a
// probe on the resolver would never fire. The loader stores its choice in
// the GOT slot of the object's own R_X86_64_IRELATIVE relocation whose
// addend is the resolver, so in a running process that slot names the
// implementation actually called. Before the process runs, the choice is
// unknown and the site stays at the resolver.

// irelative maps resolver addresses to the GOT slots their IRELATIVE
// relocations fill.
func (o *object) irelative() map[uint64]uint64 {
	o.irelOnce.Do(func() { o.irel = o.readIrelative() })
	return o.irel
}

func (o *object) readIrelative() map[uint64]uint64 {
	slots := map[uint64]uint64{}
	for _, name := range []string{".rela.dyn", ".rela.plt"} {
		sec := o.elf.Section(name)
		if sec == nil || sec.Type != elf.SHT_RELA {
			continue
		}
		data, err := sec.Data()
		if err != nil {
			continue
		}
		for i := 0; i+24 <= len(data); i += 24 {
			info := binary.LittleEndian.Uint64(data[i+8:])
			if elf.R_X86_64(info&0xffffffff) == elf.R_X86_64_IRELATIVE {
				slots[binary.LittleEndian.Uint64(data[i+16:])] = binary.LittleEndian.Uint64(data[i:])
			}
		}
	}
	return slots
}

// ifuncImpl returns the implementation the process's loader chose for
// the IFUNC fn of o, named after fn.
func (ld *loader) ifuncImpl(o *object, fn fsym) (fsym, error) {
	slot, ok := o.irelative()[fn.addr]
	if !ok {
		return fn, fmt.Errorf("no IRELATIVE relocation for %s", fn.name)
	}
	bias, err := o.bias(ld.maps)
	if err != nil {
		return fn, err
	}
	mem, err := os.Open(fmt.Sprintf("/proc/%d/mem", ld.pid))
	if err != nil {
		return fn, proc.Error(ld.pid, "memory", err)
	}
	defer mem.Close()
	var b [8]byte
	if _, err := mem.ReadAt(b[:], int64(slot+bias)); err != nil {
		return fn, proc.Error(ld.pid, "memory", err)
	}
	impl := binary.LittleEndian.Uint64(b[:]) - bias
	if p := o.segment(impl); p == nil || p.Flags&elf.PF_X == 0 || impl == fn.addr {
		// Not applied (yet): the loader relocates some objects lazily.
		return fn, fmt.Errorf("GOT slot of %s holds no implementation", fn.name)
	}
	s, ok := o.covering(impl)
	if !ok || s.addr != impl {
		// No symbol for it (stripped libc): a bare start without a size.
		s = fsym{addr: impl, global: true}
	}
	s.name, s.demangled = fn.name, fn.demangled
	return s, nil
}

// IFuncImpls lists the implementations the IFUNC resolver at link-time
// address resolver of the ELF file path may pick, as far as its code
// says: each function entry it takes the address of (`lea sym(%rip)`, as
// glibc's resolvers return their choice). ok is false when it takes none
// that is a function's entry with a known size: then the choice is
// unknown before the process runs.
func IFuncImpls(path string, resolver, size uint64) (impls []Symbol, ok bool) {
	o, err := cachedObject(path, path)
	if err != nil || o.symbols() != nil || size == 0 {
		return nil, false
	}
	code, err := o.codeAt(resolver, size)
	if err != nil {
		return nil, false
	}
	seen := map[uint64]bool{}
	for off := 0; off < len(code); {
		inst, err := x86.Decode(code[off:])
		if err != nil {
			return nil, false
		}
		pc := resolver + uint64(off+inst.Len)
		off += inst.Len
		m, isMem := inst.Args[1].(x86asm.Mem)
		if inst.Op != x86asm.LEA || !isMem || m.Base != x86asm.RIP {
			continue
		}
		t := pc + uint64(m.Disp)
		if seen[t] {
			continue
		}
		seen[t] = true
		fn, found := o.covering(t)
		if !found || fn.addr != t || fn.size == 0 {
			continue // data (a table, a string), or a bare label
		}
		impls = append(impls, Symbol{Object: path, Name: fn.name, Kind: "func", Addr: fn.addr, Size: fn.size})
	}
	return impls, len(impls) > 0
}
