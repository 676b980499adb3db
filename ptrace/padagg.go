//go:build linux && amd64

package ptrace

import (
	"fmt"

	"github.com/utap/utap/internal/pad"
	"github.com/utap/utap/probe"
	"github.com/utap/utap/ptrace/pads"
)

// Aggregations in the pads (probe.Target.Aggregate, internal/pad/agg.go):
// a pad of an aggregated entry probe adds each hit to a table in the
// memory it shares with the tracer, after its ring, one table per spec;
// the drainer reads the tables (pads/agg.go). What the tables cannot
// take stays on the record path, which the CLI aggregates from events:
// return probes (a return spec alone gets no pad, its entry having no
// probe of its own; a return pad, with an entry probe beside it, writes
// records), keys by tid (a pad knows its
// thread by fs base only, which glibc reuses) or by ustack (a stack
// keeps its breakpoint), string keys, and the specs that only got sites
// after the first ring was made (the area's size is fixed then).

// aggSlots is a table's slots (tests make it small); aggTableMax bounds
// a table's bytes (an lhist of many buckets gets fewer slots).
var aggSlots = 4096

const aggTableMax = 16 << 20

// padAggs is the tables' layout, the same in every process.
type padAggs struct {
	tables map[int]pad.AggTable // by probe index
	size   int
}

// aggLayout lays the tables out, once, from the specs the trace began
// with, and tells the drainer.
func (pd *padEngine) aggLayout() *padAggs {
	if pd.aggs != nil {
		return pd.aggs
	}
	la := &padAggs{tables: map[int]pad.AggTable{}}
	pd.aggs = la
	tr := pd.tr
	if !tr.target.Aggregate || pd.d.Tally() {
		return la
	}
	var tabs []pads.AggTable
	for _, s := range tr.sites {
		ag := s.Spec.Agg
		if ag == nil || s.Spec.Kind != probe.Entry || s.Spec.Syscall {
			continue
		}
		if _, ok := la.tables[s.Probe]; ok {
			continue
		}
		words, ok := aggKeyWords(ag)
		if !ok {
			continue
		}
		t := pad.NewAggTable(la.size, ag.Kind, words, aggSlots, aggTableMax)
		la.tables[s.Probe] = t
		la.size += (t.Size() + 63) &^ 63
		tabs = append(tabs, pads.AggTable{Probe: s.Probe, Agg: ag, T: t})
	}
	pd.d.Aggregate(tabs, tr.target.AggEvery)
	return la
}

// aggKeyWords is the key words of ag's table; false when a key cannot
// be a pad's (tid, ustack).
func aggKeyWords(ag *probe.Agg) (int, bool) {
	words := 0
	for _, k := range ag.Keys {
		switch k.Kind {
		case probe.KeyExpr:
			words++
		case probe.KeyTID, probe.KeyUstack:
			return 0, false
		}
	}
	return words, true
}

// aggBytes is the bytes a ring's memory holds for the tables.
func (pd *padEngine) aggBytes() uint64 { return uint64(pd.aggLayout().size) }

// aggSpec makes spec, the pad of ps in p, aggregate in its table when it
// can: else the pad writes records as usual.
func (pd *padEngine) aggSpec(p *process, ps *padSite, spec *pad.Spec) {
	site := ps.sp.site
	ag := site.Spec.Agg
	if ag == nil || spec.Count || p.pads.ring == nil || len(spec.Extra) > 0 {
		return
	}
	t, ok := pd.aggLayout().tables[site.Probe]
	if !ok {
		return
	}
	g := &pad.AggSite{T: t, Value: ag.Value}
	for _, k := range ag.Keys {
		switch k.Kind {
		case probe.KeyExpr:
			if f := ps.sp.fetches[k.Fetch]; f == nil || f.StrAddr() != nil {
				return
			}
			g.Keys = append(g.Keys, k.Fetch)
		case probe.KeyPID, probe.KeyComm, probe.KeyFunc:
			// The table is the process's, the slot names its site.
		default:
			return
		}
	}
	if ag.Value >= 0 && ps.sp.fetches[ag.Value].StrAddr() != nil {
		return
	}
	r := p.pads.ring
	g.Table = r.Addr + uint64(pad.Size(r.N)+t.Off)
	spec.Agg = g
	pd.say(fmt.Sprintf("%s at %#x: aggregated in the process's memory", ps.name, ps.addr))
}

// aggSay reports what the pads aggregated in memory and what they wrote
// as records instead (verbose).
func (pd *padEngine) aggSay() {
	if pd.aggs == nil || len(pd.aggs.tables) == 0 {
		return
	}
	hits, fell := pd.d.AggTotals()
	pd.say(fmt.Sprintf("aggregations: %d calls aggregated in the pads' memory, %d written as records (no free slot)", hits, fell))
}
