package compare

import (
	"debug/elf"
	"fmt"

	"golang.org/x/arch/x86/x86asm"
)

// retOffsets decodes function sym of the ELF file at path and returns the
// offsets of its RET instructions from the function's start: return probes
// for tools that cannot hijack return addresses (gdb dprintf) go there.
func retOffsets(path, sym string) ([]uint64, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, s := range syms {
		if s.Name != sym || elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Size == 0 {
			continue
		}
		if int(s.Section) >= len(f.Sections) {
			break
		}
		sec := f.Sections[s.Section]
		code := make([]byte, s.Size)
		if _, err := sec.ReadAt(code, int64(s.Value-sec.Addr)); err != nil {
			return nil, fmt.Errorf("%s: reading %s: %w", path, sym, err)
		}
		var rets []uint64
		for off := 0; off < len(code); {
			inst, err := x86asm.Decode(code[off:], 64)
			if err != nil {
				// Padding or data after the last RET: what came before stands.
				break
			}
			if inst.Op == x86asm.RET {
				rets = append(rets, uint64(off))
			}
			off += inst.Len
		}
		if len(rets) == 0 {
			return nil, fmt.Errorf("%s: no RET in %s", path, sym)
		}
		return rets, nil
	}
	return nil, fmt.Errorf("%s: no function symbol %s", path, sym)
}
