//go:build linux && amd64

package elfsym

import (
	"debug/elf"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/utap/utap/probe"
)

// usdtProbe is one static probe of an object, addresses adjusted.
type usdtProbe struct {
	stapNote
	operands []string     // the note's operand texts
	args     []probe.Expr // per operand; nil for one utap cannot read
	argErrs  []error      // why, per operand
	semOff   uint64       // file offset of the semaphore (0: none)
	semErr   error        // a semaphore the kernel cannot count
}

func (p *usdtProbe) fullName() string { return p.Provider + ":" + p.Name }

// usdtProbes reads the object's .note.stapsdt once.
func (o *object) usdtProbes() ([]usdtProbe, error) {
	o.usdtOnce.Do(func() {
		o.usdt, o.usdtErr = o.readUSDT()
		if o.usdtErr != nil {
			o.usdtErr = fmt.Errorf("reading the USDT notes of %s: %w", o.path, o.usdtErr)
		}
	})
	return o.usdt, o.usdtErr
}

func (o *object) readUSDT() ([]usdtProbe, error) {
	sec := o.elf.Section(".note.stapsdt")
	if sec == nil || sec.Type != elf.SHT_NOTE {
		return nil, nil
	}
	data, err := sec.Data()
	if err != nil {
		return nil, err
	}
	notes, err := parseStapNotes(data)
	if err != nil {
		return nil, err
	}
	var stapBase uint64
	if b := o.elf.Section(".stapsdt.base"); b != nil {
		stapBase = b.Addr
	}
	out := make([]usdtProbe, len(notes))
	for i, n := range notes {
		n.adjust(stapBase)
		p := usdtProbe{stapNote: n, operands: parseArgs(n.Args)}
		ctx := operandCtx{pc: n.PC, lookup: o.symbolAddr}
		p.args = make([]probe.Expr, len(p.operands))
		p.argErrs = make([]error, len(p.operands))
		for j, op := range p.operands {
			p.args[j], p.argErrs[j] = ctx.parseOperand(op)
		}
		p.semOff, p.semErr = o.semaphoreOffset(&p)
		out[i] = p
	}
	return out, nil
}

// semaphoreOffset finds the file offset of a probe's semaphore through
// the PT_LOAD that holds it: the kernel's uprobe reference counter is
// given as a file offset. sdt.h puts semaphores in .probes, a writable
// section with file contents; one in .bss would have none.
func (o *object) semaphoreOffset(p *usdtProbe) (uint64, error) {
	if p.Semaphore == 0 {
		return 0, nil
	}
	if off, ok := o.fileOffset(p.Semaphore); ok {
		return off, nil
	}
	for _, l := range o.loads {
		if p.Semaphore >= l.Vaddr && p.Semaphore < l.Vaddr+l.Memsz {
			return 0, fmt.Errorf("the semaphore of %s at %#x is in .bss (no file backing), so it has no file offset to count it at", p.fullName(), p.Semaphore)
		}
	}
	return 0, fmt.Errorf("the semaphore of %s at %#x is not in a loaded segment", p.fullName(), p.Semaphore)
}

// symbolAddr is the link-time address of any defined symbol (functions
// and data), for sym(%rip) operands.
func (o *object) symbolAddr(name string) (uint64, bool) {
	o.addrOnce.Do(func() {
		o.addrs = map[string]uint64{}
		add := func(syms []elf.Symbol) {
			for _, s := range syms {
				t := elf.ST_TYPE(s.Info)
				if s.Section == elf.SHN_UNDEF || s.Name == "" || t == elf.STT_SECTION || t == elf.STT_FILE || t == elf.STT_TLS {
					continue
				}
				if _, ok := o.addrs[s.Name]; !ok {
					o.addrs[s.Name] = s.Value
				}
			}
		}
		syms, err := o.elf.Symbols()
		if errors.Is(err, elf.ErrNoSymbols) && o.symbols() == nil && o.debug != nil {
			syms, _ = o.debug.Symbols()
		}
		add(syms)
		dyn, _ := o.elf.DynamicSymbols()
		add(dyn)
	})
	a, ok := o.addrs[name]
	return a, ok
}

// resolveUSDT matches a usdt: spec to the probes of its object. For the
// executable (no object named), a miss looks through its libraries to
// point at the one that has the probe.
func (ld *loader) resolveUSDT(spec *probe.Spec) ([]probe.Site, error) {
	for _, pat := range []string{spec.Provider, spec.Symbol} {
		if _, err := path.Match(pat, ""); err != nil {
			return nil, fmt.Errorf("spec %q: bad pattern %q: %w", spec.Text, pat, err)
		}
	}
	o, err := ld.objectFor(spec)
	if err != nil {
		return nil, err
	}
	probes, err := o.usdtProbes()
	if err != nil {
		return nil, err
	}
	var sites []probe.Site
	for i := range probes {
		p := &probes[i]
		if !matchName(spec.Provider, p.Provider) || !matchName(spec.Symbol, p.Name) {
			continue
		}
		s, err := o.usdtSite(p)
		if err != nil {
			return nil, fmt.Errorf("spec %q: %w", spec.Text, err)
		}
		sites = append(sites, s)
	}
	if len(sites) > 0 {
		return sites, nil
	}
	hint := ""
	if spec.Object == "" {
		for _, lp := range ld.objects()[1:] {
			lib, err := ld.open(lp)
			if err != nil {
				continue
			}
			lprobes, _ := lib.usdtProbes()
			for _, p := range lprobes {
				if matchName(spec.Provider, p.Provider) && matchName(spec.Symbol, p.Name) {
					hint = fmt.Sprintf(": it is in %s, try usdt:%s:%s:%s", lp, libShortName(lp), spec.Provider, spec.Symbol)
					break
				}
			}
			if hint != "" {
				break
			}
		}
	}
	if len(probes) == 0 {
		return nil, errorf(ErrNoUSDT, "spec %q: %s has no USDT probes (.note.stapsdt)%s", spec.Text, o.path, hint)
	}
	if hint == "" {
		hint = " (it has " + probeNames(probes, o.path) + ")"
	}
	return nil, errorf(ErrNoSymbol, "spec %q: no USDT probe matches %s:%s in %s%s", spec.Text, spec.Provider, spec.Symbol, o.path, hint)
}

// probeNames lists an object's provider:name pairs once each, the first
// few only.
func probeNames(probes []usdtProbe, obj string) string {
	const most = 12
	var names []string
	seen := map[string]bool{}
	for i := range probes {
		n := probes[i].fullName()
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	if len(names) > most {
		return strings.Join(names[:most], ", ") + fmt.Sprintf(" and %d more: utap list %s 'usdt:*'", len(names)-most, obj)
	}
	return strings.Join(names, ", ")
}

// usdtSite builds the site of one static probe. The note's pc is the nop
// the compiler emitted, an instruction boundary by construction.
func (o *object) usdtSite(p *usdtProbe) (probe.Site, error) {
	if p.semErr != nil {
		return probe.Site{}, p.semErr
	}
	code, err := o.codeAt(p.PC, maxInsn)
	if err != nil {
		return probe.Site{}, fmt.Errorf("USDT probe %s: %w", p.fullName(), err)
	}
	insn, err := decodeOne(code, p.PC)
	if err != nil {
		return probe.Site{}, fmt.Errorf("USDT probe %s: %w", p.fullName(), err)
	}
	off, _ := o.fileOffset(p.PC)
	return probe.Site{
		Object:          o.path,
		Func:            p.fullName(),
		FuncAddr:        p.PC, // events show provider:name, not an offset into it
		Addr:            p.PC,
		FileOffset:      off,
		Insn:            insn,
		USDT:            true,
		Args:            p.args,
		Operands:        p.operands,
		ArgErrs:         p.argErrs,
		Semaphore:       p.Semaphore,
		SemaphoreOffset: p.semOff,
	}, nil
}
