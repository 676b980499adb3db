//go:build linux && amd64

package ptrace

import (
	"fmt"
	"os"
	"testing"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/probe"
)

// siteAt builds the site of fn+off in the ELF file bin with debug/elf, as
// elfsym would, so engine tests do not depend on the resolver.
func siteAt(t testing.TB, bin, fn string, off uint64, fetches ...probe.Fetch) probe.Site {
	t.Helper()
	sym, fileOff := fixture.Func(t, bin, fn)
	f, err := os.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	insn := make([]byte, 16)
	f.ReadAt(insn, int64(fileOff+off))
	text := fmt.Sprintf("%s+%d", fn, off)
	return probe.Site{
		Spec:       &probe.Spec{Text: text, Symbol: fn, Offset: off, Fetches: fetches},
		Object:     bin,
		Func:       fn,
		FuncAddr:   sym.Value,
		FuncSize:   sym.Size,
		Addr:       sym.Value + off,
		FileOffset: fileOff + off,
		Insn:       insn,
		Fetches:    fetches,
	}
}

// funcInsns lists the offsets of every instruction of fn in bin.
func funcInsns(t testing.TB, bin, fn string) []uint64 {
	t.Helper()
	s := siteAt(t, bin, fn, 0)
	f, err := os.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	code := make([]byte, s.FuncSize+16)
	f.ReadAt(code, int64(s.FileOffset))
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

// specSite is the site of fn's entry in bin probed by the spec text, bound
// as elfsym would bind it.
func specSite(t testing.TB, bin, fn, text string) probe.Site {
	t.Helper()
	spec, err := probe.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	s := siteAt(t, bin, fn, 0)
	s.Spec = spec
	if err := s.Bind(); err != nil {
		t.Fatal(err)
	}
	return s
}
