package bytecode

import (
	"bytes"

	"github.com/utap/utap/probe"
)

// pageSize splits string reads so that a short string just below an
// unreadable page reads without a fault, as bpf_probe_read_user_str does.
const pageSize = 4096

// readStr reads the NUL-terminated string at addr, without its NUL, into
// buf: at most limit (<= MaxStrLen) bytes. It faults if an unreadable byte
// comes first. One read per page touched, byte by byte only after a fault,
// in case the Env maps memory more finely than pages.
func (s *scratch) readStr(addr uint64, env probe.Env, buf *[probe.MaxStrLen]byte, limit int) ([]byte, error) {
	n := 0
	for n < limit {
		a := addr + uint64(n)
		chunk := min(limit-n, int(pageSize-a%pageSize))
		p := buf[n : n+chunk]
		if env.Read(a, p) != nil {
			return readStrSlow(a, env, buf, n, limit)
		}
		if i := bytes.IndexByte(p, 0); i >= 0 {
			return buf[:n+i], nil
		}
		n += chunk
	}
	return buf[:limit], beyond(addr+uint64(limit), env)
}

// beyond reads the byte after a string cut at its limit: the kernel's
// bpf_probe_read_user_str (with a limit+1 buffer) reads it too.
func beyond(addr uint64, env probe.Env) error {
	var b [1]byte
	if env.Read(addr, b[:]) != nil {
		return ErrFault
	}
	return nil
}

func readStrSlow(addr uint64, env probe.Env, buf *[probe.MaxStrLen]byte, n, limit int) ([]byte, error) {
	for ; n < limit; n, addr = n+1, addr+1 {
		if env.Read(addr, buf[n:n+1]) != nil {
			return nil, ErrFault
		}
		if buf[n] == 0 {
			return buf[:n], nil
		}
	}
	return buf[:n], beyond(addr, env)
}
