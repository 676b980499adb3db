package pads

import (
	"encoding/binary"

	"github.com/utap/utap/internal/pad"
	"github.com/utap/utap/internal/syscalls"
	"github.com/utap/utap/probe"
)

// SysSite is a system call pad's site (ptrace/padsys.go): its record
// becomes the event the stop path would have made at the call's return.
type SysSite struct {
	Nr      int
	caps    []pad.SysCap
	offs    []int
	n       int // len(Info.Captures): the sides' length
	fdPaths bool
	strsize int
	// plain: the spec has no condition.
	plain bool
	// dirents: the index of its getdents capture, -1 if none
	// (syscalls.DirentCapture: its records are counted past it).
	dirents int
}

// NewSysSite is the event side of the system call pads of call nr for
// probe s (Drainer.SiteIDs).
func NewSysSite(s *probe.Site, nr int, caps []pad.SysCap, n int, fdPaths bool, strsize int) *Site {
	offs, _, _ := pad.SysLayout(caps)
	return &Site{Probe: s.Spec.Text, Func: s.Func, Index: s.Probe,
		Sys: &SysSite{Nr: nr, caps: caps, offs: offs, n: n, fdPaths: fdPaths, strsize: strsize, plain: syscalls.Plain(s),
			dirents: syscalls.DirentCapture(nr)}}
}

// event fills pe's call from the record's system call area.
func (ss *SysSite) event(pe *padEvent, rec *pad.Record) {
	le := binary.LittleEndian
	b := rec.Sys
	ev := &pe.ev
	sys := &pe.sys // the event's own: no allocation per call
	*sys = probe.Syscall{Nr: ss.Nr, Returned: true}
	if len(b) >= pad.SysHead {
		for i := range sys.Args {
			sys.Args[i] = le.Uint64(b[8*i:])
		}
		sys.Ret = int64(le.Uint64(b[48:]))
	}
	if ss.n > 0 {
		sys.Entry, sys.Exit = make([][]byte, ss.n), make([][]byte, ss.n)
		dirents := -1 // the records a getdents call returned (pad.SysCap.DirentCount)
		for k, c := range ss.caps {
			var data []byte
			if c.Same > 0 {
				data = sys.Entry[c.Same-1]
				if ss.caps[c.Same-1].Exit {
					data = sys.Exit[c.Same-1]
				}
			} else {
				off := ss.offs[k]
				if off+8 > len(b) {
					continue
				}
				n := int64(le.Uint64(b[off:]))
				if n < 0 || off+8+int(n) > len(b) {
					continue
				}
				data = append([]byte{}, b[off+8:off+8+int(n)]...)
			}
			if data == nil {
				continue
			}
			if c.DirentCount {
				if len(data) == 8 {
					dirents = int(le.Uint64(data))
				}
				continue
			}
			if c.Exit {
				sys.Exit[k] = data
			} else {
				sys.Entry[k] = data
			}
		}
		if i := ss.dirents; dirents >= 0 && i >= 0 && sys.Exit[i] != nil {
			sys.Exit[i] = syscalls.WithDirents(sys.Exit[i], dirents)
		}
	}
	ev.Kind = probe.Return.String()
	ev.Sys = sys
	if ss.fdPaths {
		sys.FdPaths = syscalls.FdPaths(ev.PID, sys, ss.strsize)
	}
}
