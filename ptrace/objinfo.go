//go:build linux && amd64

package ptrace

import (
	"debug/elf"
	"slices"

	"github.com/utap/utap/elfsym"
	"github.com/utap/utap/internal/proc"
)

// objInfo is what the engine reads of an ELF file itself (symbols and
// sites come from elfsym): its load segments, its rseq critical-section
// descriptors and where the unwinders start.
type objInfo struct {
	loads     []elf.ProgHeader
	rseq      *elf.Section // __rseq_cs: struct rseq_cs descriptors, nil if none
	unwinders []funcSym
	// debugState is the loader's _dl_debug_state (off 0 in any other
	// object).
	debugState funcSym
	// sigAction and sigMask are the file offsets of libc's sigaction and
	// pthread_sigmask, 0 in any other object (sigtrap.go).
	sigAction, sigMask uint64
	libcSigaction      bool // sigAction is glibc's __libc_sigaction
	// writes are a C library's write functions, the sync points'
	// (padsync.go); goRuntime: a Go program's file, whose runtime writes
	// with system calls of its own (elfsym.IsGo).
	writes    []funcSym
	goRuntime bool
}

// funcSym is a function the engine puts a pad or breakpoint of its own on.
type funcSym struct {
	name        string
	off         uint64 // file offset
	value, size uint64 // link-time address and size (a pad's bounds)
}

// objInfo reads path once per trace; nil if it is not a readable ELF.
func (ld *loader) objInfo(path string) *objInfo {
	if oi, ok := ld.elfs[path]; ok {
		return oi
	}
	var oi *objInfo
	if f, err := elf.Open(path); err == nil {
		oi = readObjInfo(f, isLibc(path))
		f.Close()
	}
	ld.elfs[path] = oi
	return oi
}

// readObjInfo reads f; libc: it is a C library (isLibc), whose write
// functions are read too.
func readObjInfo(f *elf.File, libc bool) *objInfo {
	oi := &objInfo{rseq: f.Section("__rseq_cs"), goRuntime: elfsym.IsGo(f)}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			oi.loads = append(oi.loads, p.ProgHeader)
		}
	}
	dyn, _ := f.DynamicSymbols()
	syms, _ := f.Symbols()
	all := append(dyn, syms...)
	for _, s := range all {
		if s.Name == debugStateSym && elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Value != 0 && oi.debugState.off == 0 {
			if off, ok := oi.fileOffset(s.Value); ok {
				oi.debugState = funcSym{s.Name, off, s.Value, s.Size}
			}
		}
		oi.signalSym(s)
	}
	oi.unwinders = oi.funcSyms(all, unwinders)
	if libc {
		oi.writes = oi.funcSyms(all, syncWrites)
	}
	return oi
}

// funcSyms are the functions of syms named in names, each once (its
// first symbol with an address in the file).
func (oi *objInfo) funcSyms(syms []elf.Symbol, names []string) []funcSym {
	var out []funcSym
	seen := map[string]bool{}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Value == 0 || seen[s.Name] || !slices.Contains(names, s.Name) {
			continue
		}
		if off, ok := oi.fileOffset(s.Value); ok {
			seen[s.Name] = true
			out = append(out, funcSym{s.Name, off, s.Value, s.Size})
		}
	}
	return out
}

// signalSym records s if it is libc's sigaction or pthread_sigmask. glibc's
// __libc_sigaction is what sigaction, signal and its own callers reach;
// elsewhere (musl) sigaction is.
func (oi *objInfo) signalSym(s elf.Symbol) {
	if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Value == 0 {
		return
	}
	off, ok := oi.fileOffset(s.Value)
	if !ok {
		return
	}
	switch s.Name {
	case "__libc_sigaction":
		oi.sigAction, oi.libcSigaction = off, true
	case "sigaction":
		if !oi.libcSigaction {
			oi.sigAction = off
		}
	case "pthread_sigmask":
		oi.sigMask = off
	}
}

// fileOffset maps a link-time address to its offset in the file.
func (oi *objInfo) fileOffset(addr uint64) (uint64, bool) {
	for _, p := range oi.loads {
		if addr >= p.Vaddr && addr < p.Vaddr+p.Filesz {
			return addr - p.Vaddr + p.Off, true
		}
	}
	return 0, false
}

// bias returns runtime minus link-time addresses for the object mapped
// by m (proc.Bias).
func (oi *objInfo) bias(m mapping) (uint64, bool) {
	return proc.Bias(m, oi.loads)
}
