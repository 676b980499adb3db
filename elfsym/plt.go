//go:build linux && amd64

package elfsym

import (
	"debug/elf"
	"encoding/binary"
	"sort"

	"github.com/utap/utap/internal/x86"
)

// pltStubs finds the PLT stubs of the object, named "func@plt" as ltrace
// and objdump name them. Rather than assume one linker's layout, every
// entry of .plt, .plt.sec (IBT: the stubs callers jump to) and .plt.got is
// decoded, and its `jmp *slot(%rip)` is matched to the relocation that
// fills that GOT slot (JUMP_SLOT in .rela.plt, GLOB_DAT in .rela.dyn).
// Lazy .plt entries under IBT jump to PLT0, not through the GOT, so only
// their .plt.sec twins are reported; IRELATIVE slots (static binaries)
// have no symbol and are skipped.
func (o *object) pltStubs(dynsym []elf.Symbol) ([]fsym, error) {
	got := map[uint64]string{}
	for _, name := range []string{".rela.plt", ".rela.dyn"} {
		sec := o.elf.Section(name)
		if sec == nil || sec.Type != elf.SHT_RELA {
			continue
		}
		data, err := sec.Data()
		if err != nil {
			return nil, err
		}
		for i := 0; i+24 <= len(data); i += 24 {
			off := binary.LittleEndian.Uint64(data[i:])
			info := binary.LittleEndian.Uint64(data[i+8:])
			typ := elf.R_X86_64(info & 0xffffffff)
			sym := info >> 32
			if typ != elf.R_X86_64_JMP_SLOT && typ != elf.R_X86_64_GLOB_DAT {
				continue
			}
			if sym == 0 || sym > uint64(len(dynsym)) || dynsym[sym-1].Name == "" {
				continue
			}
			got[off] = dynsym[sym-1].Name
		}
	}
	if len(got) == 0 {
		return nil, nil
	}
	var stubs []fsym
	for _, name := range []string{".plt", ".plt.sec", ".plt.got"} {
		sec := o.elf.Section(name)
		if sec == nil || sec.Type != elf.SHT_PROGBITS {
			continue
		}
		data, err := sec.Data()
		if err != nil {
			return nil, err
		}
		ent := sec.Entsize
		if ent == 0 {
			ent = 16
		}
		for off := uint64(0); off+ent <= uint64(len(data)); off += ent {
			slot, ok := gotSlot(data[off:off+ent], sec.Addr+off)
			if !ok {
				continue
			}
			if fn, ok := got[slot]; ok {
				stubs = append(stubs, fsym{name: fn + "@plt", addr: sec.Addr + off, size: ent, global: true, plt: true,
					demangled: demangled(fn + "@plt")})
			}
		}
	}
	sort.Slice(stubs, func(i, j int) bool { return stubs[i].addr < stubs[j].addr })
	return stubs, nil
}

// gotSlot decodes one PLT entry at addr and returns the GOT slot its
// `jmp *disp(%rip)` (optionally bnd-prefixed) goes through.
func gotSlot(entry []byte, addr uint64) (uint64, bool) {
	for i := 0; i < len(entry); {
		n, err := x86.Len(entry[i:])
		if err != nil {
			return 0, false
		}
		in := entry[i : i+n]
		if len(in) > 0 && in[0] == 0xf2 { // bnd prefix (MPX), kept by older IBT PLTs
			in = in[1:]
		}
		if len(in) == 6 && in[0] == 0xff && in[1] == 0x25 {
			disp := int32(binary.LittleEndian.Uint32(in[2:]))
			return addr + uint64(i+n) + uint64(int64(disp)), true
		}
		i += n
	}
	return 0, false
}
