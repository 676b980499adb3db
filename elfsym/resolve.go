//go:build linux && amd64

package elfsym

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/utap/utap/probe"
)

// Resolve matches every spec to its sites in t. A spec that matches no
// site is an error naming it. Probe (the index into specs) is set on each
// site. Every Site.Addr is checked to be an instruction boundary.
func Resolve(specs []*probe.Spec, t Target) ([]probe.Site, error) {
	sites, _, err := ResolveNotes(specs, t)
	return sites, err
}

// ResolveNotes is Resolve, with notices of what it left out: a spec
// matching several functions (C++ overloads, a glob) is bound to each by
// that function's own parameter names, and the functions lacking a name it
// uses are skipped, one notice per spec. It is an error only when none has
// the name.
func ResolveNotes(specs []*probe.Spec, t Target) ([]probe.Site, []string, error) {
	ld, err := newLoader(t)
	if err != nil {
		return nil, nil, err
	}
	defer ld.close()
	var sites []probe.Site
	var notes []string
	var optErr error // the first optional spec that matched nothing
	for i, spec := range specs {
		if spec.Syscall {
			continue // not in any object: the CLI makes its sites
		}
		s, err := ld.resolve(spec)
		if err != nil && spec.Optional && errors.Is(err, ErrNoSymbol) {
			if optErr == nil {
				optErr = err
			}
			if spec.Kind != probe.Return { // its twin says nothing new
				notes = append(notes, fmt.Sprintf("the filter's %s matches no function: left out, as ltrace does", spec.Symbol))
			}
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		kept := s[:0]
		var skipped []string
		var firstErr error
		for j := range s {
			s[j].Spec, s[j].Probe = spec, i
			if err := s[j].Bind(); err != nil {
				if len(s) == 1 || !errors.Is(err, probe.ErrNoParam) {
					if strings.HasPrefix(err.Error(), fmt.Sprintf("spec %q", spec.Text)) {
						return nil, nil, err // it names the spec already
					}
					return nil, nil, fmt.Errorf("spec %q: %w", spec.Text, err)
				}
				if firstErr == nil {
					firstErr = err
				}
				skipped = append(skipped, skippedName(s[j]))
				continue
			}
			kept = append(kept, s[j])
		}
		if len(kept) == 0 {
			return nil, nil, fmt.Errorf("%w (none of its %d functions has it)", firstErr, len(s))
		}
		if len(skipped) > 0 {
			notes = append(notes, fmt.Sprintf("spec %q: %d of %d functions skipped, without the parameter names it uses: %s",
				spec.Text, len(skipped), len(s), strings.Join(skipped, ", ")))
		}
		sites = append(sites, kept...)
	}
	if len(sites) == 0 && optErr != nil {
		return nil, nil, optErr // no name of the filters matched
	}
	return sites, notes, nil
}

// skippedName names a site in a notice: its function, with its parameters
// when known (overloads share a name).
func skippedName(s probe.Site) string {
	if len(s.Params) == 0 {
		return s.Func
	}
	return s.Func + "(" + strings.Join(s.Params, ", ") + ")"
}

func (ld *loader) resolve(spec *probe.Spec) ([]probe.Site, error) {
	if spec.Provider != "" {
		return ld.resolveUSDT(spec)
	}
	o, err := ld.objectFor(spec)
	if err != nil {
		return nil, err
	}
	if err := o.symbols(); err != nil {
		return nil, err
	}
	if spec.Symbol == "" {
		s, err := o.addressSite(spec)
		if err != nil {
			return nil, fmt.Errorf("spec %q: %w", spec.Text, err)
		}
		return []probe.Site{s}, nil
	}
	if _, err := path.Match(spec.Symbol, ""); err != nil {
		return nil, fmt.Errorf("spec %q: bad pattern %q: %w", spec.Text, spec.Symbol, err)
	}
	fns := o.match(spec.Symbol)
	if len(fns) == 0 {
		return nil, ld.noSymbol(spec, o)
	}
	if len(fns) > manyParams {
		o.loadParams()
	}
	sites := make([]probe.Site, 0, len(fns))
	// A pattern's aliases, one site an address (match), meet again where
	// IFUNCs resolve to one implementation (memcpy and memmove and the
	// implementation's own symbol, for libc:*): one site there too, under
	// the best name, as ltrace keeps one symbol an address. Three were
	// three events a call, and no pad (several probes at one address).
	at := map[uint64]int{}
	var named []fsym
	for _, fn := range fns {
		if fn.ifunc && ld.pid > 0 {
			if impl, err := ld.ifuncImpl(o, fn); err == nil {
				fn = impl
			}
		}
		i, dup := at[fn.addr]
		if dup && !better(fn, named[i]) {
			continue
		}
		s, err := o.site(spec, fn, fn.addr+spec.Offset)
		if err != nil {
			return nil, fmt.Errorf("spec %q: %w", spec.Text, err)
		}
		if dup {
			sites[i], named[i] = s, fn
			continue
		}
		at[fn.addr] = len(sites)
		sites = append(sites, s)
		named = append(named, fn)
	}
	return sites, nil
}

// manyParams is the number of functions of an object past which reading
// all its DWARF at once beats reading it one compilation unit at a time.
const manyParams = 64

// noSymbol explains a spec that matched nothing, pointing at the object
// that has the function when the user forgot to name it.
func (ld *loader) noSymbol(spec *probe.Spec, o *object) error {
	pattern := spec.Symbol
	if !isGlob(pattern) {
		pattern = "*" + pattern + "*"
	}
	hint := fmt.Sprintf("try: utap list %s '%s'", o.path, pattern)
	if spec.Object == "" && !isGlob(spec.Symbol) {
		for _, p := range ld.objects()[1:] {
			lib, err := ld.open(p)
			if err != nil || lib.symbols() != nil {
				continue
			}
			if len(lib.match(spec.Symbol)) > 0 {
				hint = fmt.Sprintf("it is in %s: try %s:%s", p, libShortName(p), spec.Symbol)
				break
			}
		}
	}
	return errorf(ErrNoSymbol, "spec %q: no function matches %q in %s (%s)", spec.Text, spec.Symbol, o.path, hint)
}

// libShortName is the short name that designates a library: its base
// name up to ".so".
func libShortName(p string) string {
	base := filepath.Base(p)
	for i := 0; i+3 <= len(base); i++ {
		if base[i:i+3] == ".so" && i > 0 {
			return base[:i]
		}
	}
	return base
}

// site builds the site for fn probed at addr.
func (o *object) site(spec *probe.Spec, fn fsym, addr uint64) (probe.Site, error) {
	if fn.size > 0 && addr-fn.addr >= fn.size {
		return probe.Site{}, fmt.Errorf("%s+%#x is beyond the end of %s (%d bytes)", fn.name, addr-fn.addr, fn.name, fn.size)
	}
	goFunc := o.isGo && o.goEntries[fn.addr]
	if goFunc && addr == fn.addr && spec.Kind == probe.Entry {
		addr = o.goEntry(fn)
	}
	insn, err := o.insnAt(fn, addr)
	if err != nil {
		return probe.Site{}, err
	}
	off, _ := o.fileOffset(addr)
	s := probe.Site{
		Object:     o.path,
		Func:       fn.display(),
		FuncAddr:   fn.addr,
		FuncSize:   fn.size,
		Addr:       addr,
		FileOffset: off,
		Insn:       insn,
		GoFunc:     goFunc,
		IFunc:      fn.ifunc,
	}
	if goFunc {
		// Treats ABI0 assembly functions as ABIInternal too, for now.
		s.ABI = probe.ABIGoRegs
	}
	if !fn.plt {
		s.Params = o.paramsAt(fn.addr)
	}
	if !goFunc && addr == fn.addr && len(spec.Fetches) == 0 && spec.Provider == "" {
		// Only a probe that names no fetch shows the prototype.
		s.Proto = o.protoAt(fn)
	}
	return s, nil
}

// addressSite builds the site of a bare link-time address. Inside a known
// function it is checked like sym+off (and Func names that function);
// elsewhere only the instruction at the address can be decoded.
func (o *object) addressSite(spec *probe.Spec) (probe.Site, error) {
	addr := spec.Address
	if fn, ok := o.covering(addr); ok {
		return o.site(spec, fn, addr)
	}
	for _, fn := range o.plt {
		if addr >= fn.addr && addr < fn.addr+fn.size {
			return o.site(spec, fn, addr)
		}
	}
	code, err := o.codeAt(addr, maxInsn)
	if err != nil {
		return probe.Site{}, err
	}
	insn, err := decodeOne(code, addr)
	if err != nil {
		return probe.Site{}, err
	}
	off, _ := o.fileOffset(addr)
	return probe.Site{Object: o.path, Addr: addr, FuncAddr: addr, FileOffset: off, Insn: insn}, nil
}
