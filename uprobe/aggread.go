//go:build linux && amd64

package uprobe

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/cilium/ebpf"
	"github.com/utap/utap/internal/agg"
	"github.com/utap/utap/probe"
)

// aggReader turns the aggregation maps (agg.go) into events of Kind
// "agg": per key, what was added since its last emit, so that the CLI's
// merge of every emit is the map's total. It runs on the goroutine that
// emits: the ring reader's while tracing, the closing one at the end.
type aggReader struct {
	layouts map[int]*aggLayout // by probe index
	maps    map[string]*ebpf.Map
	sites   *siteTable
	every   time.Duration // 0: at the end only
	next    time.Time
	last    map[string]aggTotal // by map name and key bytes
}

// aggTotal is what a key's emits have carried so far.
type aggTotal struct {
	state      agg.State
	unreadable uint64
}

// tick emits the changes when AggEvery has passed since the last.
func (r *aggReader) tick(emit func(*probe.Event)) error {
	if r == nil || r.every <= 0 || time.Now().Before(r.next) {
		return nil
	}
	return r.emit(emit)
}

// emit reads every map and emits what changed since the last emit.
func (r *aggReader) emit(emit func(*probe.Event)) error {
	r.next = time.Now().Add(r.every)
	if r.last == nil {
		r.last = map[string]aggTotal{}
	}
	idx := make([]int, 0, len(r.layouts))
	for i := range r.layouts {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	var errs []error
	for _, i := range idx {
		l := r.layouts[i]
		if err := r.read(l, r.maps[l.mapName], emit); err != nil {
			errs = append(errs, fmt.Errorf("reading the aggregation of %s: %w", l.spec.Text, err))
		}
	}
	return errors.Join(errs...)
}

// read emits the changed keys of one map.
func (r *aggReader) read(l *aggLayout, m *ebpf.Map, emit func(*probe.Event)) error {
	var key []byte
	var perCPU [][]byte
	it := m.Iterate()
	for it.Next(&key, &perCPU) {
		st, unreadable := l.sum(perCPU)
		id := l.mapName + "\x00" + string(key)
		prev := r.last[id]
		d := &probe.AggDelta{Unreadable: unreadable - prev.unreadable}
		switch {
		case st.Count != prev.state.Count:
			// Fields read ahead of the count (a hit being added) go out
			// now, and the next delta leaves them out: the sums stay exact.
			// Min and max stay the totals': a merge keeps the least and most.
			d.State = st
			d.State.Count -= prev.state.Count
			d.State.Sum -= prev.state.Sum
			d.State.Buckets = slices.Clone(st.Buckets)
			for b := range prev.state.Buckets {
				d.State.Buckets[b] -= prev.state.Buckets[b]
			}
			r.last[id] = aggTotal{state: st, unreadable: unreadable}
		case d.Unreadable != 0:
			// The CLI takes no state of a count of 0: the fields wait.
			prev.unreadable = unreadable
			r.last[id] = prev
		default:
			continue
		}
		ev, err := r.event(l, key, d)
		if err != nil {
			return err
		}
		emit(ev)
	}
	return it.Err()
}

// sum adds up a key's per-CPU values into a state.
func (l *aggLayout) sum(perCPU [][]byte) (st agg.State, unreadable uint64) {
	le := binary.LittleEndian
	if l.buckets > 0 {
		st.Buckets = make([]uint64, l.buckets)
	}
	for _, v := range perCPU {
		n := le.Uint64(v[aggCount:])
		unreadable += le.Uint64(v[aggUnreadable:])
		if n == 0 {
			continue
		}
		part := agg.State{Count: n, Sum: int64(le.Uint64(v[aggSum:]))}
		part.Min = int64(^le.Uint64(v[aggNotMin:]) ^ 1<<63)
		part.Max = int64(le.Uint64(v[aggMax:]) ^ 1<<63)
		st.Merge(part)
		for b := range st.Buckets {
			st.Buckets[b] += le.Uint64(v[aggBuckets+8*b:])
		}
	}
	return st, unreadable
}

// event is the Kind "agg" event of one key's delta: the site from the
// key's cookie, the key's parts as their fetches show them.
func (r *aggReader) event(l *aggLayout, key []byte, d *probe.AggDelta) (*probe.Event, error) {
	le := binary.LittleEndian
	cookie := le.Uint32(key)
	r.sites.mu.Lock()
	if int(cookie) >= len(r.sites.sites) {
		r.sites.mu.Unlock()
		return nil, fmt.Errorf("a key names site %d of %d", cookie, len(r.sites.sites))
	}
	site := r.sites.sites[cookie]
	r.sites.mu.Unlock()
	faulted := le.Uint32(key[4:])
	ev := &probe.Event{Kind: "agg", Probe: site.Spec.Text, Func: site.Func, ProbeIndex: site.Probe, Agg: d}
	for i, k := range l.spec.Agg.Keys {
		off := l.partOff[i]
		var v probe.Value
		switch k.Kind {
		case probe.KeyPID, probe.KeyTID:
			v.Int = le.Uint64(key[off:])
		case probe.KeyComm:
			c := key[off : off+16]
			if j := bytes.IndexByte(c, 0); j >= 0 {
				c = c[:j]
			}
			v.IsStr, v.Str = true, string(c)
		case probe.KeyFunc:
			v.IsStr, v.Str = true, site.Func
		case probe.KeyExpr:
			f := site.Fetches[k.Fetch] // bound, as the event path decodes it
			v.Format = f.Format
			if isStrKey(f.Expr) {
				strValue(&v, key[off:off+8+strKeyLen])
				break
			}
			if faulted&(1<<i) != 0 {
				v.Err = true
				break
			}
			v.Int, v.Signed = le.Uint64(key[off:]), f.Expr.Type().Signed
		}
		d.Key = append(d.Key, v)
	}
	return ev, nil
}

// strValue decodes a str() key part as the event path decodes a record's
// string slot: NULL, a fault, or the bytes to the NUL.
func strValue(v *probe.Value, part []byte) {
	n := int64(binary.LittleEndian.Uint64(part))
	switch {
	case n == strNull:
		v.Null = true
	case n <= 0:
		v.Err = true
	default:
		b := part[8 : 8+min(n, probe.MaxStrLen+1)]
		if i := bytes.IndexByte(b, 0); i >= 0 {
			b = b[:i]
		}
		v.IsStr, v.Str = true, string(b)
	}
}
