//go:build linux && amd64

package elfsym

import (
	"path"
	"strings"
)

// isGlob says whether pattern has glob metacharacters.
func isGlob(pattern string) bool { return strings.ContainsAny(pattern, `*?[\`) }

// matchName reports whether name matches the glob pattern (path.Match
// syntax; a pattern without metacharacters is compared as is).
func matchName(pattern, name string) bool {
	if !isGlob(pattern) {
		return pattern == name
	}
	ok, _ := path.Match(pattern, name)
	return ok
}

// match returns the symbols matching pattern, one per address (the best
// name among aliases), in address order. A "@plt" suffix selects PLT
// stubs, anything else functions.
func (o *object) match(pattern string) []fsym {
	list := o.funcs
	if strings.HasSuffix(pattern, "@plt") {
		list = o.plt
	}
	var out []fsym
	if !isGlob(pattern) {
		// A plain name is looked up, not matched against every symbol:
		// a trace of thousands of functions would be quadratic.
		list = o.named(list, pattern)
	}
	for _, s := range list {
		if !s.matches(pattern) {
			continue
		}
		// list is sorted by address, so aliases are adjacent.
		if n := len(out); n > 0 && out[n-1].addr == s.addr {
			if better(s, out[n-1]) {
				out[n-1] = s
			}
			continue
		}
		out = append(out, s)
	}
	return out
}

// named returns the symbols of list (o.funcs or o.plt, sorted by
// address) whose name or source name is name, in list's order, through
// an index built on first use.
func (o *object) named(list []fsym, name string) []fsym {
	o.nameMu.Lock()
	defer o.nameMu.Unlock()
	k := 0
	if len(list) > 0 && len(o.plt) > 0 && &list[0] == &o.plt[0] {
		k = 1
	}
	if o.nameIdx[k] == nil {
		idx := make(map[string][]int, len(list))
		for i, s := range list {
			idx[s.name] = append(idx[s.name], i)
			if s.demangled != "" && s.demangled != s.name {
				idx[s.demangled] = append(idx[s.demangled], i)
			}
		}
		o.nameIdx[k] = idx
	}
	is := o.nameIdx[k][name]
	out := make([]fsym, 0, len(is))
	for _, i := range is {
		out = append(out, list[i])
	}
	return out
}
