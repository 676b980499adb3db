//go:build linux && amd64

package elfsym

import (
	"strings"

	"github.com/ianlancetaylor/demangle"
)

// C++ and Rust symbols are known by their source names, as ltrace -C and
// gdb show them: app::Server::handle for
// _ZN3app6Server6handleEiRKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE.
// Parameters are left out (overloads share a name, as in gdb's break);
// a spec or a pattern matches the mangled name too.

// demangled returns the source name of a mangled symbol (a "@plt" or
// "@VERSION" suffix kept), or "" when name is not mangled.
func demangled(name string) string {
	base, suffix := name, ""
	if i := strings.IndexByte(name, '@'); i > 0 {
		base, suffix = name[:i], name[i:]
	}
	if !strings.HasPrefix(base, "_Z") && !strings.HasPrefix(base, "_R") {
		return ""
	}
	d, err := demangle.ToString(base, demangle.NoParams)
	if err != nil || d == base {
		return ""
	}
	return d + suffix
}

// display is the name events and listings show.
func (s fsym) display() string {
	if s.demangled != "" {
		return s.demangled
	}
	return s.name
}

// matches says whether the glob pattern matches s by either name.
func (s fsym) matches(pattern string) bool {
	return matchName(pattern, s.name) || s.demangled != "" && matchName(pattern, s.demangled)
}

// mangled is s's symbol name when listings show another, else "".
func (s fsym) mangled() string {
	if s.demangled != "" {
		return s.name
	}
	return ""
}
