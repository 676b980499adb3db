//go:build linux && amd64

package uprobe

import (
	"encoding/binary"

	"github.com/utap/utap/internal/syscalls"
)

// sysConf is a number's entry in the table the programs read.
//
//	0  u64 record's first word (sysTag | site); 0: not traced
//	8  u32 flags (sysNoReturn, sysDirents)   12 u32 condition number
//	16 u32 record size           20 u32 captures
//	24 captures, 16 bytes each:
//	   u16 slot offset, u16 address argument's offset, u16 length's
//	   offset (0: max), u8 kind, u8 exit, u32 max, u16 elem, u8 flags
const (
	sysConfSize  = 24 + 16*sysMaxCaps
	sysConfCaps  = 24
	sysCapSize   = 16
	sysNoReturn  = 1
	capOffSlot   = 0
	capOffArg    = 2
	capOffLen    = 4
	capOffKind   = 6
	capOffExit   = 7
	capOffMax    = 8
	capOffElem   = 12 // u16: bytes of an element, 0: the length is bytes
	capOffFlags  = 14 // u8: capLeftRet, capIndirect
	capLeftRet   = 1
	capIndirect  = 2 // the address is the pointer found at the argument's (pselect6's sigset)
	confOffFlags = 8
	confOffCond  = 12
	confOffSize  = 16
	confOffNcap  = 20
)

// conf encodes c's table entry.
func (ss *sysSpec) conf(c *sysCall) []byte {
	b := make([]byte, sysConfSize)
	le := binary.LittleEndian
	le.PutUint64(b, sysTag|uint64(c.site))
	flags := uint32(0)
	if c.info.noReturn {
		flags |= sysNoReturn
	}
	if syscalls.DirentCapture(c.nr) >= 0 {
		flags |= sysDirents
	}
	le.PutUint32(b[confOffFlags:], flags)
	le.PutUint32(b[confOffCond:], uint32(c.cond))
	le.PutUint32(b[confOffSize:], uint32(c.size))
	caps := c.info.caps[:min(len(c.info.caps), sysMaxCaps)]
	le.PutUint32(b[confOffNcap:], uint32(len(caps)))
	for i, cp := range caps {
		e := b[sysConfCaps+i*sysCapSize:]
		le.PutUint16(e[capOffSlot:], uint16(c.offs[i]))
		if cp.spOff >= 0 {
			le.PutUint16(e[capOffArg:], sysOffSP)
		} else {
			le.PutUint16(e[capOffArg:], uint16(sysArgOff[cp.arg]))
		}
		switch {
		case cp.lenRet && cp.kind != capIov:
			le.PutUint16(e[capOffLen:], regAX)
		case cp.lenArg >= 0:
			le.PutUint16(e[capOffLen:], uint16(sysArgOff[cp.lenArg]))
		}
		le.PutUint16(e[capOffElem:], uint16(cp.elem))
		if cp.left {
			e[capOffFlags] |= capLeftRet
		}
		if cp.indirect {
			e[capOffFlags] |= capIndirect
		}
		e[capOffKind] = byte(cp.kind)
		if cp.exit {
			e[capOffExit] = 1
		}
		n := cp.max
		if cp.kind == capStr {
			n++
		} else if cp.kind == capBytes && cp.lenArg < 0 && !cp.lenRet && cp.size > 0 {
			n = min(n, cp.size)
		}
		le.PutUint32(e[capOffMax:], uint32(n))
	}
	return b
}
