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
