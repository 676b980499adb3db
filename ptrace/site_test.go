package ptrace

import (
	"debug/elf"
	"fmt"
	"testing"

	"github.com/utap/utap/probe"
)

// siteAt builds the site of fn+off in the ELF file bin with debug/elf, as
// elfsym would, so engine tests do not depend on the resolver.
func siteAt(t testing.TB, bin, fn string, off uint64, fetches ...probe.Fetch) probe.Site {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		if s.Name != fn || elf.ST_TYPE(s.Info) != elf.STT_FUNC {
			continue
		}
		addr := s.Value + off
		for _, p := range f.Progs {
			if p.Type == elf.PT_LOAD && addr >= p.Vaddr && addr < p.Vaddr+p.Filesz {
				insn := make([]byte, 16)
				p.ReadAt(insn, int64(addr-p.Vaddr))
				text := fmt.Sprintf("%s+%d", fn, off)
				return probe.Site{
					Spec:       &probe.Spec{Text: text, Symbol: fn, Offset: off, Fetches: fetches},
					Object:     bin,
					Func:       fn,
					FuncAddr:   s.Value,
					FuncSize:   s.Size,
					Addr:       addr,
					FileOffset: addr - p.Vaddr + p.Off,
					Insn:       insn,
					Fetches:    fetches,
				}
			}
		}
	}
	t.Fatalf("%s: no function %s", bin, fn)
	return probe.Site{}
}

// funcInsns lists the offsets of every instruction of fn in bin.
func funcInsns(t testing.TB, bin, fn string) []uint64 {
	t.Helper()
	s := siteAt(t, bin, fn, 0)
	f, _ := elf.Open(bin)
	defer f.Close()
	code := make([]byte, s.FuncSize+16)
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && s.Addr >= p.Vaddr && s.Addr < p.Vaddr+p.Filesz {
			p.ReadAt(code, int64(s.Addr-p.Vaddr))
		}
	}
	var offs []uint64
	for off := uint64(0); off < s.FuncSize; {
		offs = append(offs, off)
		n, err := lenOf(code[off:])
		if err != nil {
			t.Fatalf("%s+%d: %v", fn, off, err)
		}
		off += uint64(n)
	}
	return offs
}

func argFetch(n int) probe.Fetch {
	return probe.Fetch{Expr: &probe.Arg{N: n}, Format: probe.FormatDec, Text: fmt.Sprintf("arg%d", n)}
}
