//go:build linux && amd64

package elfsym

import (
	"debug/gosym"
	"errors"
	"fmt"
)

// goFuncs lists the functions named by a Go binary's pclntab, which
// survives stripping (-ldflags=-s -w) because the runtime needs it for
// tracebacks. Assembly (ABI0) functions are listed too.
func (o *object) goFuncs() ([]fsym, error) {
	sec := o.elf.Section(".gopclntab")
	if sec == nil {
		return nil, errors.New("no .gopclntab section in a Go binary")
	}
	data, err := sec.Data()
	if err != nil {
		return nil, fmt.Errorf("reading .gopclntab: %w", err)
	}
	var textStart uint64
	if text := o.elf.Section(".text"); text != nil {
		textStart = text.Addr
	}
	tab, err := gosym.NewTable(nil, gosym.NewLineTable(data, textStart))
	if err != nil {
		return nil, fmt.Errorf("parsing .gopclntab: %w", err)
	}
	funcs := make([]fsym, 0, len(tab.Funcs))
	for _, f := range tab.Funcs {
		funcs = append(funcs, fsym{name: f.Name, addr: f.Entry, size: f.End - f.Entry, global: true})
	}
	return funcs, nil
}
