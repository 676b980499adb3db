//go:build linux && amd64

package main

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/utap/utap/probe"
)

// A printf-like function's variadic arguments are shown as its format
// says, as ltrace's format lens shows them: printf("%d %s", -5, "str").
// The CLI adds fetches of the arguments after the format (each as a
// number and as a string, since only the format, read at the same hit,
// says which), then keeps the ones the conversions use.

// maxVarargs is how many arguments after a format are read (the
// registers left, then the stack).
const maxVarargs = 8

type varargs struct {
	mu    sync.Mutex
	sites map[probeFunc]vaSite
	any   atomic.Bool // sites has one: most traces have none, and take is per event
}

// vaSite is where a site's format and hidden fetches are in its events.
type vaSite struct{ format, first, n int }

// add gives the sites of a printf-like function the hidden fetches: a
// function whose prototype ends with a format (ltrace.conf's format, or
// a DWARF char * named format or fmt) and takes more.
func (v *varargs) add(sites []probe.Site) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for i := range sites {
		s := &sites[i]
		k, arg, n := formatParam(s)
		if k < 0 || k >= len(s.Fetches) || n <= 0 {
			continue
		}
		first := len(s.Fetches)
		fs := slices.Clip(s.Fetches)
		for j := range n {
			var a probe.Expr = &probe.Arg{N: arg + j}
			if s.Spec.Kind == probe.Return {
				a = probe.EntryArg(arg + j)
			}
			fs = append(fs, probe.Fetch{Expr: a, Format: probe.FormatHex, Text: "va"},
				probe.Fetch{Expr: &probe.StrOf{Addr: a}, Text: "va"})
		}
		s.Fetches = fs
		if v.sites == nil {
			v.sites = map[probeFunc]vaSite{}
		}
		v.sites[probeFunc{s.Probe, s.Func}] = vaSite{format: k, first: first, n: n}
		v.any.Store(true)
	}
}

// formatParam is the index of a site's format among its fetches (-1 if
// none), the argument number of the first variadic argument and how many
// are read. A return twin shows a format that comes after an output
// argument (snprintf(+string2, ulong, format)): its variadic arguments
// are read from the registers kept at the entry, so at most those.
func formatParam(s *probe.Site) (fetch, arg, n int) {
	p := s.Proto
	if s.Syscall || s.USDT || len(s.Spec.Fetches) > 0 || p == nil || len(p.Params) == 0 {
		return -1, 0, 0
	}
	k := len(p.Params) - 1
	last := p.Params[k]
	if last.Kind != probe.ProtoString {
		return -1, 0, 0
	}
	switch {
	case s.Spec.Kind == probe.Entry && len(s.Fetches) == len(p.Params):
		fetch, n = k, maxVarargs
	case s.Spec.Kind == probe.Return && s.Spec.Twinned && len(s.Fetches) > 1 && last.Format:
		// Fetches: ret, then the parameters from the first output one.
		fetch, n = len(s.Fetches)-1, probe.MaxEntryArgs-(k+1)
	default:
		return -1, 0, 0
	}
	// ltrace.conf's format lens implies the variadic rest; DWARF says it
	// (More), and names the parameter.
	if !last.Format {
		if !p.More {
			return -1, 0, 0
		}
		name := ""
		if k < len(s.Params) {
			name = strings.TrimLeft(s.Params[k], "_")
		}
		if name != "format" && name != "fmt" {
			return -1, 0, 0
		}
	}
	return fetch, k + 2, n
}

// has says whether function fn's events of probe index probe take their
// variadic arguments.
func (v *varargs) has(probe int, fn string) bool {
	if !v.any.Load() {
		return false
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	_, ok := v.sites[probeFunc{probe, fn}]
	return ok
}

// take replaces the hidden fetches of an event with the values its
// format's conversions use.
func (v *varargs) take(ev *probe.Event) {
	if !v.any.Load() || ev.Kind != "entry" && ev.Kind != "return" {
		return
	}
	v.mu.Lock()
	vs, ok := v.sites[probeFunc{ev.ProbeIndex, ev.Func}]
	v.mu.Unlock()
	if !ok || len(ev.Args) < vs.first+2*vs.n {
		return
	}
	hidden := ev.Args[vs.first : vs.first+2*vs.n]
	f := ev.Args[vs.format]
	var shown []probe.Value
	if f.IsStr {
		shown = formatValues(f.Str, hidden)
	}
	ev.Args = append(ev.Args[:vs.first:vs.first], shown...)
}

// formatValues walks a printf format: each conversion takes the next
// argument (a number and the string it points to, in pairs), shown as
// ltrace shows it. A float is in a vector register, which no fetch
// reads: shown as ?, taking no integer argument.
func formatValues(format string, pairs []probe.Value) []probe.Value {
	var out []probe.Value
	next := 0
	take := func() (probe.Value, probe.Value, bool) {
		if 2*next+1 >= len(pairs) {
			return probe.Value{}, probe.Value{}, false
		}
		n, s := pairs[2*next], pairs[2*next+1]
		next++
		return n, s, true
	}
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		i++
		for i < len(format) && strings.IndexByte("-+ #0'I", format[i]) >= 0 {
			i++
		}
		for i < len(format) && (format[i] >= '0' && format[i] <= '9' || format[i] == '*' || format[i] == '.') {
			if format[i] == '*' {
				take() // a width or precision argument
			}
			i++
		}
		size := 4
		for i < len(format) && strings.IndexByte("hlqjztL", format[i]) >= 0 {
			switch format[i] {
			case 'h':
				size /= 2
			case 'l', 'q', 'j', 'z', 't', 'L':
				size = 8
			}
			i++
		}
		if i >= len(format) {
			break
		}
		conv := format[i]
		if conv == '%' {
			continue
		}
		if strings.IndexByte("fFeEgGaA", conv) >= 0 {
			out = append(out, probe.Value{Err: true})
			continue
		}
		n, s, ok := take()
		if !ok {
			break
		}
		size = max(size, 1)
		mask := ^uint64(0)
		if size < 8 {
			mask = 1<<(8*size) - 1
		}
		v := probe.Value{Int: n.Int & mask, Err: n.Err}
		switch conv {
		case 'd', 'i':
			v.Signed, v.Format = true, probe.FormatDec
			if size < 8 && v.Int>>(8*size-1) != 0 {
				v.Int |= ^mask // sign-extend
			}
		case 'u':
			v.Format = probe.FormatUnsigned
		case 'x', 'X':
			v.Format = probe.FormatHex
		case 'o':
			v.Format = probe.FormatOctal
		case 'c':
			v.Int, v.Format = n.Int&0xff, probe.FormatChar
		case 'p':
			v.Int, v.Format = n.Int, probe.FormatHex
		case 's':
			if n.Int == 0 && !n.Err {
				v = probe.Value{Null: true}
			} else {
				v = s
			}
		default:
			v.Int, v.Format = n.Int, probe.FormatHex
		}
		out = append(out, v)
	}
	return out
}
