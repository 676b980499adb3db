//go:build linux && amd64

package syscalls

import (
	"strconv"
	"strings"
)

// xv is one named value; an xlat lists them in strace's order, which is
// the order flag names are printed in.
type xv struct {
	v uint64
	s string
}

type xlat []xv

// name returns the entry equal to v.
func (x xlat) name(v uint64) (string, bool) {
	for _, e := range x {
		if e.v == v {
			return e.s, true
		}
	}
	return "", false
}

// enum shows v by name, else as strace's fallback: decimal or hex.
func (x xlat) enum(v uint64, hex bool) string {
	if s, ok := x.name(v); ok {
		return s
	}
	if hex {
		return "0x" + strconv.FormatUint(v, 16)
	}
	return strconv.FormatUint(v, 10)
}

// flags is strace's printflags: every entry whose bits are all set, in
// table order, then the unknown remainder in hex; "0" when v is 0.
func (x xlat) flags(v uint64) string {
	if v == 0 {
		if s, ok := x.name(0); ok {
			return s
		}
		return "0"
	}
	var parts []string
	for _, e := range x {
		if e.v != 0 && v&e.v == e.v {
			parts = append(parts, e.s)
			v &^= e.v
		}
	}
	if v != 0 {
		parts = append(parts, "0x"+strconv.FormatUint(v, 16))
	}
	return strings.Join(parts, "|")
}

// octal is C's "%#03o" as strace prints modes: 0644, 022, 000.
func octal(v uint64) string {
	s := strconv.FormatUint(v, 8)
	if v != 0 {
		s = "0" + s
	}
	for len(s) < 3 {
		s = "0" + s
	}
	return s
}

// hex is C's "%#lx": 0 has no prefix.
func hex(v uint64) string {
	if v == 0 {
		return "0"
	}
	return "0x" + strconv.FormatUint(v, 16)
}

// ptr is strace's printaddr.
func ptr(v uint64) string {
	if v == 0 {
		return "NULL"
	}
	return hex(v)
}
