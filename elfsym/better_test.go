package elfsym

import "testing"

// TestBetterName: of a function's aliases, the name a user knows: not a
// compatibility version, exported, fewest leading underscores, global
// before weak, shortest (glibc's binding of each below).
func TestBetterName(t *testing.T) {
	global := func(n string) fsym { return fsym{name: n, global: true} }
	weak := func(n string) fsym { return fsym{name: n, global: true, weak: true} }
	local := func(n string) fsym { return fsym{name: n} }
	for _, c := range []struct{ want, other fsym }{
		{weak("lseek"), global("__lseek")},
		{weak("lseek"), global("llseek@GLIBC_2.2.5")},
		{global("strchr"), weak("index")},
		{global("memcmp"), weak("bcmp")},
		{global("memcpy@@GLIBC_2.14"), global("memcpy@GLIBC_2.2.5")},
		{weak("mbrtowc"), global("__mbrtowc")},
		{global("__libc_malloc"), local("malloc_impl")},
	} {
		if !better(c.want, c.other) || better(c.other, c.want) {
			t.Errorf("%s (global %v, weak %v) not before %s (global %v, weak %v)",
				c.want.name, c.want.global, c.want.weak, c.other.name, c.other.global, c.other.weak)
		}
	}
}
