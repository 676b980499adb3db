//go:build linux && amd64

package uprobe

import (
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/utap/utap/internal/agg"
	"github.com/utap/utap/probe"
	"golang.org/x/sys/unix"
)

// Aggregating in place (probe.Target.Aggregate, spec '=>' f(x) by keys):
// the program of an aggregated site computes the value and the keys, then
// updates one entry of its spec's map instead of sending a record, as
// bpftrace's maps do. A spec's map is a per-CPU hash, so CPUs never share
// a cache line; its updates are atomic all the same, because a sleepable
// program can be preempted by another hit on its CPU mid-update. The
// tracer reads the maps at the end, once the probes are out (exact
// totals), and every AggEvery while tracing (aggread.go).
//
// Key, keySize bytes:
//
//	0  u32 attach cookie (the site: its spec, its function)
//	4  u32 faulted keys: bit i set when key part i's read faulted (0 there)
//	8  the parts, Spec.Agg.Keys in order: pid, tid and expressions 8
//	   bytes, comm 16 (bpf_get_current_comm), func none (the cookie), a
//	   str() 8 + strKeyLen: the read's result (a record's string slot:
//	   the length with its NUL, strNull, or negative), then the bytes,
//	   zeroed past the NUL
//
// Value, per CPU:
//
//	0  u64 count
//	8  u64 unreadable: hits whose value's read faulted
//	16 s64 sum
//	24 u64 ^(min ^ 1<<63): the signed minimum, biased to unsigned order
//	       and inverted so that 0 is unset and both bounds keep the larger
//	32 u64 max ^ 1<<63
//	40 u64 buckets[n]: hist's and lhist's, agg.Kind.Bucket's layout
const (
	aggCount = 8 * iota
	aggUnreadable
	aggSum
	aggNotMin
	aggMax
	aggBuckets
)

const (
	aggKeyHdr = 8
	// The key is built in the frame's string-comparison buffers (free
	// once the condition is done; the value and keys may not use them),
	// the value and its fault flag above it.
	aggRegion     = slotChunk
	aggRegionSize = slotStrBuf + strBufSize - slotChunk
	aggKeyRoom    = aggRegionSize - 16
	// strKeyLen holds what a record's string slot holds: MaxStrLen bytes
	// and a NUL, so keys show as the event path's strings.
	strKeyLen = (probe.MaxStrLen + 1 + 7) &^ 7
	// maxAggValue is the kernel's bound on a per-CPU value (PCPU_MIN_UNIT_SIZE).
	maxAggValue = 32 << 10
	// maxAggKeys bounds a map's keys; the hits that find it full are
	// counted (statAggFull) and said.
	maxAggKeys = 1 << 16
)

// Frame slots of the aggregation tail (aggRegion).
const (
	slotAggKey      = aggRegion
	slotAggVal      = aggRegion + aggKeyRoom     // the value
	slotAggValFault = aggRegion + aggKeyRoom + 8 // its read faulted
)

// aggLayout is how one spec's aggregation is kept in its map.
type aggLayout struct {
	spec      *probe.Spec
	mapName   string
	keySize   int
	partOff   []int // per Spec.Agg.Keys: offset in the key; -1 for func
	valueSize int
	buckets   int // hist's or lhist's buckets; 0 for none
}

// aggPlan lays out the map of s's aggregation, or says why it stays on
// the event path (the CLI aggregates its events then).
func aggPlan(s *probe.Spec, mapName string) (*aggLayout, string) {
	a := s.Agg
	l := &aggLayout{spec: s, mapName: mapName, keySize: aggKeyHdr}
	switch s.Kind {
	case probe.Entry, probe.Return:
	default:
		return nil, "a " + s.Kind.String() + " probe"
	}
	for _, k := range a.Keys {
		off := l.keySize
		switch k.Kind {
		case probe.KeyComm:
			l.keySize += 16
		case probe.KeyFunc:
			off = -1
		case probe.KeyUstack:
			// The DWARF unwinder runs in user space, on a record's copy of
			// the stack: such a spec sends its records (the fp walk's
			// bpf_get_stackid could key a map, but its frames are not
			// those the default mode shows).
			return nil, "a ustack key"
		case probe.KeyExpr:
			l.keySize += 8
			if isStrKey(s.Fetches[k.Fetch].Expr) {
				l.keySize += strKeyLen
			}
		default: // pid, tid
			l.keySize += 8
		}
		l.partOff = append(l.partOff, off)
	}
	if l.keySize > aggKeyRoom {
		return nil, fmt.Sprintf("keys of %d bytes, more than the %d the BPF stack has room for", l.keySize-aggKeyHdr, aggKeyRoom-aggKeyHdr)
	}
	switch a.Kind.Func {
	case agg.Hist:
		l.buckets = agg.HistBuckets
	case agg.LHist:
		l.buckets = int((a.Kind.Max-a.Kind.Min)/a.Kind.Step) + 2
	}
	l.valueSize = aggBuckets + 8*l.buckets
	if l.valueSize > maxAggValue {
		return nil, fmt.Sprintf("%d buckets", l.buckets)
	}
	return l, ""
}

// siteWhy says why site, one of the spec's, cannot aggregate in l's map
// ("" when it can): its bound fetches (a USDT argument, a parameter's
// type) decide.
func (l *aggLayout) siteWhy(site *probe.Site) string {
	a := l.spec.Agg
	if a.Value >= len(site.Fetches) {
		return "its fetches differ"
	}
	if a.Value >= 0 && usesStrings(site.Fetches[a.Value].Expr) {
		return "its value reads strings"
	}
	for _, k := range a.Keys {
		if k.Kind != probe.KeyExpr {
			continue
		}
		if k.Fetch >= len(site.Fetches) {
			return "its fetches differ"
		}
		e := site.Fetches[k.Fetch].Expr
		switch {
		case isStrKey(e) != isStrKey(l.spec.Fetches[k.Fetch].Expr):
			return "its fetches differ"
		case isStrKey(e):
			if usesStrings(e.(*probe.StrOf).Addr) {
				return "a key that reads strings"
			}
		case e.Type().Str:
			return "a string key other than str(x)"
		case usesStrings(e):
			return "a key that reads strings"
		}
	}
	return ""
}

// mapSpec is the BPF map of l: allocated as keys come (a hist's value is
// 560 bytes per CPU), at most maxAggKeys of them.
func (l *aggLayout) mapSpec() *ebpf.MapSpec {
	return &ebpf.MapSpec{Name: l.mapName, Type: ebpf.PerCPUHash, KeySize: uint32(l.keySize),
		ValueSize: uint32(l.valueSize), MaxEntries: maxAggKeys, Flags: unix.BPF_F_NO_PREALLOC}
}

// isStrKey says whether e is a key read as a string: str(x).
func isStrKey(e probe.Expr) bool {
	so, ok := e.(*probe.StrOf)
	return ok && so.Len == nil
}

// usesStrings says whether e reads or compares strings, which uses the
// frame's string buffer, where the aggregation's key is built.
func usesStrings(e probe.Expr) bool {
	if e == nil {
		return false
	}
	if e.Type().Str {
		return true
	}
	switch e := e.(type) {
	case *probe.Unary:
		return usesStrings(e.X)
	case *probe.Binary:
		return usesStrings(e.X) || usesStrings(e.Y)
	case *probe.Ternary:
		return usesStrings(e.Cond) || usesStrings(e.Then) || usesStrings(e.Else)
	case *probe.Cast:
		return usesStrings(e.X)
	case *probe.Deref:
		return usesStrings(e.Addr)
	}
	return false
}

// aggSpecs plans the aggregation maps of sites: one per spec that can be
// aggregated in place, by the spec's probe index. why says, by spec text,
// why the others cannot.
func aggSpecs(sites []probe.Site) (layouts map[int]*aggLayout, why map[string]string) {
	layouts, why = map[int]*aggLayout{}, map[string]string{}
	for i := range sites {
		s := sites[i].Spec
		if s.Agg == nil || layouts[sites[i].Probe] != nil || why[s.Text] != "" {
			continue
		}
		l, reason := aggPlan(s, fmt.Sprintf("%s%d", mapAggPrefix, sites[i].Probe))
		if l == nil {
			why[s.Text] = reason
			continue
		}
		layouts[sites[i].Probe] = l
	}
	return layouts, why
}

// aggOf is the layout site aggregates in, nil when it sends records;
// it notes why not and which specs aggregate in the kernel.
func (s *Spec) aggOf(site *probe.Site) *aggLayout {
	l := s.aggs[site.Probe]
	if l == nil {
		return nil
	}
	if why := l.siteWhy(site); why != "" {
		s.aggWhy[site.Spec.Text] = why + " at " + where(site)
		return nil
	}
	s.aggIn[site.Probe] = true
	return l
}
