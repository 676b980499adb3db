//go:build linux && amd64

package compare

import (
	"debug/elf"
	"fmt"

	"github.com/utap/utap/internal/x86"
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
		offs, err := x86.Rets(code)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", path, sym, err)
		}
		var rets []uint64
		for _, off := range offs {
			rets = append(rets, uint64(off))
		}
		if len(rets) == 0 {
			return nil, fmt.Errorf("%s: no RET in %s", path, sym)
		}
		return rets, nil
	}
	return nil, fmt.Errorf("%s: no function symbol %s", path, sym)
}
