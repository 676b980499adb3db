//go:build linux && amd64

package uprobe

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/utap/utap/probe"
)

// decode turns one ring-buffer record into ev, using the layout of the
// program of the site the record's cookie names.
func decode(raw []byte, sites []probe.Site, progs []*program, stk *stackDecoder, ev *probe.Event) error {
	if len(raw) < hdrSize {
		return fmt.Errorf("short record (%d bytes)", len(raw))
	}
	le := binary.LittleEndian
	idx := le.Uint64(raw)
	if idx >= uint64(len(sites)) {
		return fmt.Errorf("record names site %d of %d", idx, len(sites))
	}
	s, p := &sites[idx], progs[idx]
	if len(raw) < p.size {
		return fmt.Errorf("record of %d bytes for a %d-byte layout", len(raw), p.size)
	}
	pidTgid := le.Uint64(raw[8:])
	*ev = probe.Event{
		TimeNs:     int64(le.Uint64(raw[16:])),
		PID:        int(pidTgid >> 32),
		TID:        int(uint32(pidTgid)),
		Probe:      s.Spec.Text,
		Func:       s.Func,
		Kind:       s.Spec.Kind.String(),
		ProbeIndex: s.Probe,
		Args:       make([]probe.Value, len(p.fields)),
	}
	if s.Spec.Kind == probe.Return {
		ev.Ret = &probe.Value{Int: le.Uint64(raw[hdrSize:]), Signed: true}
		ev.DurationNs = int64(le.Uint64(raw[hdrSize+8:]))
	}
	for i, fl := range p.fields {
		f := s.Fetches[i]
		v := probe.Value{Format: f.Format}
		switch fl.kind {
		case fieldLit:
			v.IsStr, v.Str = true, fl.lit
		case fieldBuf:
			n := int64(le.Uint64(raw[fl.off:]))
			if n == strNull {
				v.Null = true
				break
			}
			if n < 0 {
				v.Err = true
				break
			}
			v.IsStr, v.Str = true, string(raw[fl.off+8:fl.off+8+int(min(n, probe.MaxStrLen))])
		case fieldStr:
			n := int64(le.Uint64(raw[fl.off:]))
			if n == strNull {
				v.Null = true
				break
			}
			if n <= 0 {
				v.Err = true // as probe.FetchValue: no other field set
				break
			}
			v.IsStr = true
			b := raw[fl.off+8 : fl.off+8+int(min(n, probe.MaxStrLen+1))]
			if i := bytes.IndexByte(b, 0); i >= 0 {
				b = b[:i]
			}
			v.Str = string(b)
		default:
			if le.Uint64(raw[fl.off+8:]) != 0 {
				v.Err = true
				break
			}
			v.Int = le.Uint64(raw[fl.off:])
			v.Signed = f.Expr.Type().Signed
		}
		ev.Args[i] = v
	}
	if p.stackOff != 0 && stk != nil {
		ev.Stack = stk.frames(raw[p.stackOff:], ev.PID, p.stackConf)
	}
	return nil
}

// strNull is a string field's length when its address was 0 (a NULL
// char *): no errno is this negative.
const strNull = -(1 << 20)
