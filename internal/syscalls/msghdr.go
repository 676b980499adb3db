//go:build linux && amd64

package syscalls

import (
	"encoding/binary"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// sendmsg's and recvmsg's struct msghdr (a Msg capture), as strace shows
// it: the name, the iovecs and the control messages (SCM_RIGHTS' fds,
// SCM_CREDENTIALS).

const (
	sizeMsghdr  = 56
	maxMsgName  = sizeSockaddr
	maxMsgCtl   = 256
	msgNameOff  = 0
	msgNameLen  = 8
	msgIovOff   = 16
	msgIovLen   = 24
	msgCtlOff   = 32
	msgCtlLen   = 40
	msgFlagsOff = 48
)

// readMsg reads a msghdr at addr and what it points to (Capture.Msg);
// out: recvmsg's, whose iovecs hold at most ret bytes.
func readMsg(addr uint64, ret int64, out bool, lim int, read ReadFunc) []byte {
	h := make([]byte, sizeMsghdr)
	if read(addr, h) != nil {
		return nil
	}
	le := binary.LittleEndian
	part := func(b []byte, at, n uint64, max int) []byte {
		n = min(n, uint64(max))
		data := make([]byte, n)
		if at == 0 || n == 0 || read(at, data) != nil {
			data = nil
		}
		return append(le.AppendUint64(b, uint64(len(data))), data...)
	}
	b := part(h, le.Uint64(h[msgNameOff:]), uint64(le.Uint32(h[msgNameLen:])), maxMsgName)
	left := int64(-1)
	if out {
		left = max(ret, 0)
	}
	iov := readIovAt(le.Uint64(h[msgIovOff:]), min(le.Uint64(h[msgIovLen:]), MaxIovElems), left, lim, read)
	b = append(le.AppendUint64(b, uint64(len(iov))), iov...)
	return part(b, le.Uint64(h[msgCtlOff:]), le.Uint64(h[msgCtlLen:]), maxMsgCtl)
}

// msgParts splits a Msg capture: the msghdr, then the name, the
// iovecs' bytes (as an Iov capture's) and the control data; ok is false
// when b holds no whole msghdr.
func msgParts(b []byte) (h, name, iov, ctl []byte, ok bool) {
	if len(b) < sizeMsghdr {
		return nil, nil, nil, nil, false
	}
	rest := b[sizeMsghdr:]
	next := func() []byte {
		if len(rest) < 8 {
			return nil
		}
		n := min(int(le.Uint64(rest)), len(rest)-8)
		p := rest[8 : 8+n]
		rest = rest[8+n:]
		return p
	}
	name, iov, ctl = next(), next(), next()
	return b[:sizeMsghdr], name, iov, ctl, true
}

// msgIov is the iovecs part of a Msg capture, as an Iov capture's bytes,
// and their count.
func msgIov(b []byte) ([]byte, int) {
	h, _, iov, _, ok := msgParts(b)
	if !ok {
		return nil, 0
	}
	return iov, int(min(le.Uint64(h[msgIovLen:]), MaxIovElems))
}

// msghdrStr shows a Msg capture; out: recvmsg's.
func (x *ctx) msghdrStr(b []byte, out bool) string {
	h, name, iov, ctl, ok := msgParts(b)
	if !ok {
		return ""
	}
	var f fields
	nameAt, nameLen := le.Uint64(h[msgNameOff:]), le.Uint32(h[msgNameLen:])
	switch {
	case nameAt == 0:
		f.add("msg_name", "NULL")
	case len(name) > 0:
		f.add("msg_name", sockaddrStr(quoter(x.o.Hex), name[:min(len(name), int(nameLen))]))
	default:
		f.add("msg_name", hex(nameAt))
	}
	f.add("msg_namelen", strconv.FormatUint(uint64(nameLen), 10))
	iovLen := le.Uint64(h[msgIovLen:])
	if at := le.Uint64(h[msgIovOff:]); at == 0 {
		f.add("msg_iov", "NULL")
	} else {
		f.add("msg_iov", x.iovList(iov, int(min(iovLen, MaxIovElems)), out))
	}
	f.add("msg_iovlen", strconv.FormatUint(iovLen, 10))
	if ctlLen := le.Uint64(h[msgCtlLen:]); ctlLen > 0 {
		if at := le.Uint64(h[msgCtlOff:]); at == 0 || ctl == nil {
			f.add("msg_control", hex(at))
		} else {
			f.add("msg_control", cmsgsStr(ctl, ctlLen))
		}
	}
	f.add("msg_controllen", strconv.FormatUint(le.Uint64(h[msgCtlLen:]), 10))
	f.add("msg_flags", msgFlags.flags(uint64(le.Uint32(h[msgFlagsOff:]))))
	return f.close()
}

// cmsgsStr shows control messages: [{cmsg_len=20, cmsg_level=SOL_SOCKET,
// cmsg_type=SCM_RIGHTS, cmsg_data=[4]}]; total is msg_controllen, of
// which b holds the bytes read.
func cmsgsStr(b []byte, total uint64) string {
	var parts []string
	for len(b) >= 16 {
		n := le.Uint64(b)
		if n < 16 {
			break
		}
		level, typ := le.Uint32(b[8:]), le.Uint32(b[12:])
		var f fields
		f.add("cmsg_len", strconv.FormatUint(n, 10))
		f.add("cmsg_level", sockLevels.enum(uint64(level), true))
		data := b[16:min(uint64(len(b)), n)]
		switch {
		case level == unix.SOL_SOCKET && typ == unix.SCM_RIGHTS:
			f.add("cmsg_type", "SCM_RIGHTS")
			var fds []string
			for ; len(data) >= 4; data = data[4:] {
				fds = append(fds, strconv.Itoa(int(int32(le.Uint32(data)))))
			}
			f.add("cmsg_data", "["+strings.Join(fds, ", ")+"]")
		case level == unix.SOL_SOCKET && typ == unix.SCM_CREDENTIALS && len(data) >= 12:
			f.add("cmsg_type", "SCM_CREDENTIALS")
			f.add("cmsg_data", "{pid="+strconv.Itoa(int(int32(le.Uint32(data))))+", uid="+
				strconv.FormatUint(uint64(le.Uint32(data[4:])), 10)+", gid="+strconv.FormatUint(uint64(le.Uint32(data[8:])), 10)+"}")
		default:
			f.add("cmsg_type", hex(uint64(typ)))
		}
		parts = append(parts, f.close())
		step := (n + 7) &^ 7
		if step > uint64(len(b)) {
			break
		}
		b = b[step:]
	}
	if uint64(len(parts)) == 0 && total > 0 {
		return "[]"
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
