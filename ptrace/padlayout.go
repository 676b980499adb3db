//go:build linux && amd64

package ptrace

import (
	"fmt"

	"github.com/utap/utap/internal/bytecode"
	"github.com/utap/utap/internal/pad"
	"github.com/utap/utap/probe"
	"github.com/utap/utap/ptrace/pads"
)

// padLayout is where a pad keeps a probe's values: in its record's (rec,
// in record order), past them (extra, in value extraSlot's string part:
// pad.Spec.Extra), or nowhere (a return's typed value, made from rax by
// the drainer); where maps each fetch there (pads.Site.Where), nil when
// each fetch is its own record value.
type padLayout struct {
	rec, extra []*bytecode.Program
	extraSlot  int
	where      []int8
}

// layoutOf places a probe's fetches in its pad's record: an entry's holds
// pad.MaxValues values, a return's two fewer (rax and the entry's tsc
// follow them). What does not fit goes, first, a return's typed value
// (OnlyRet), then the plain values (no read, no string) after those that
// fit, past the record, at most pad.MaxExtra; ok false when even so they
// do not fit (snprintf's return: its format's arguments).
func layoutOf(fetches []*bytecode.Program, ret bool) (lay padLayout, ok bool) {
	room := pad.MaxValues
	if ret {
		room -= 2
	}
	if len(fetches) <= room {
		return padLayout{rec: fetches}, true
	}
	lay.where = make([]int8, len(fetches))
	var left []int
	must := 0 // values that must be in the record: reads, strings
	for i, f := range fetches {
		switch {
		case ret && f.OnlyRet():
			lay.where[i] = pads.FromRax
		default:
			left = append(left, i)
			if !plainValue(f) {
				must++
			}
		}
	}
	if must > room {
		return padLayout{}, false
	}
	fit, free := len(left) <= room, room-must
	lay.extraSlot = -1
	for _, i := range left {
		f := fetches[i]
		switch {
		case fit || !plainValue(f):
		case free > 0:
			free--
		default:
			lay.where[i] = pads.ExtraAt(len(lay.extra))
			lay.extra = append(lay.extra, f)
			continue
		}
		if plainValue(f) {
			lay.extraSlot = len(lay.rec)
		}
		lay.where[i] = int8(len(lay.rec))
		lay.rec = append(lay.rec, f)
	}
	switch {
	case len(lay.extra) == 0:
		lay.extraSlot = 0
	case len(lay.extra) > pad.MaxExtra:
		return padLayout{}, false
	case ret:
		lay.extraSlot = pad.MaxValues - 1 // the entry's tsc, after rax
	case lay.extraSlot < 0:
		return padLayout{}, false // every record value a string's
	}
	return lay, true
}

// layout is sp's layoutOf, a return probe's or an entry's as its site is.
func (sp *siteProg) layout() (padLayout, bool) {
	return layoutOf(sp.fetches, sp.site.Spec != nil && sp.site.Spec.Kind == probe.Return)
}

// layoutWhy says why sp's values do not fit its pad's record, "" if they
// do.
func (sp *siteProg) layoutWhy() string {
	if _, ok := sp.layout(); ok {
		return ""
	}
	room := pad.MaxValues
	if sp.site.Spec != nil && sp.site.Spec.Kind == probe.Return {
		room -= 2
	}
	return fmt.Sprintf("%d values (a record holds %d, and %d plain ones past them)", len(sp.fetches), room, pad.MaxExtra)
}

// entryArgs are the entry's arguments return probe sp reads (its entry
// keeps them: pad.Hijack.Args).
func (sp *siteProg) entryArgs() []int {
	return pad.ArgsOf(append([]*bytecode.Program{sp.cond}, sp.fetches...)...)
}

// plainValue says whether f's value is a plain integer, which may go past
// a record.
func plainValue(f *bytecode.Program) bool { return !f.Reads() && f.StrAddr() == nil }

// spec puts lay's values into s.
func (lay padLayout) spec(s *pad.Spec) {
	s.Fetches, s.Extra, s.ExtraSlot = lay.rec, lay.extra, lay.extraSlot
}
