//go:build linux && amd64

package elfsym

import (
	"path"
	"sort"
	"strings"
)

// List returns every probe-able location of t whose name matches the glob
// pattern ("" for all): functions and PLT stubs of the executable and its
// libraries (for a process, those it has mapped, with Runtime filled in),
// sorted by object (executable first) then address. Aliases are all
// listed. A pattern "OBJECT:GLOB" restricts the listing to one object
// (named as in a spec). A PLT stub also matches by its bare name, so
// "malloc" lists malloc@plt too. IFUNC symbols have Kind "ifunc": their
// address is the resolver's, not the implementation's. USDT probes
// (Kind "usdt", Name "provider:name") match by provider:name or by name;
// "usdt:[OBJECT:]GLOB" lists static probes only.
func List(t Target, pattern string) ([]Symbol, error) {
	ld, err := newLoader(t)
	if err != nil {
		return nil, err
	}
	defer ld.close()
	if pattern != "" {
		if _, err := path.Match(pattern, ""); err != nil {
			return nil, err
		}
	}
	paths, pattern, usdtOnly, err := ld.listScope(pattern)
	if err != nil {
		return nil, err
	}
	var out []Symbol
	for _, p := range paths {
		o, err := ld.open(p)
		if err != nil {
			continue // a mapped file that is gone or unreadable
		}
		if err := o.symbols(); err != nil {
			return nil, err
		}
		var bias uint64
		biased := false
		if ld.pid > 0 {
			if b, err := o.bias(ld.maps); err == nil {
				bias, biased = b, true
			}
		}
		start := len(out)
		if usdtOnly {
			out, err = o.listUSDT(out, pattern)
			if err != nil {
				return nil, err
			}
		}
		for _, s := range o.funcs {
			if usdtOnly {
				break
			}
			if pattern != "" && !s.matches(pattern) {
				continue
			}
			if len(out)-start == manyParams {
				o.loadParams()
			}
			kind := "func"
			if s.ifunc {
				kind = "ifunc"
			}
			out = append(out, Symbol{Object: o.path, Name: s.display(), Kind: kind, Addr: s.addr, Size: s.size,
				Params: o.paramsAt(s.addr), Mangled: s.mangled(), Go: o.isGo && o.goEntries[s.addr]})
		}
		for _, s := range o.plt {
			if usdtOnly {
				break
			}
			if pattern != "" && !s.matches(pattern) && !matchName(pattern, strings.TrimSuffix(s.name, "@plt")) &&
				!matchName(pattern, strings.TrimSuffix(s.demangled, "@plt")) {
				continue
			}
			out = append(out, Symbol{Object: o.path, Name: s.display(), Kind: "plt", Addr: s.addr, Size: s.size, Mangled: s.mangled()})
		}
		if !usdtOnly {
			if out, err = o.listUSDT(out, pattern); err != nil {
				return nil, err
			}
		}
		obj := out[start:]
		sort.SliceStable(obj, func(i, j int) bool { return obj[i].Addr < obj[j].Addr })
		if biased {
			for i := range obj {
				obj[i].Runtime = obj[i].Addr + bias
			}
		}
	}
	return out, nil
}
