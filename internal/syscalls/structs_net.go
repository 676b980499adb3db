//go:build linux && amd64

package syscalls

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/utap/utap/internal/dec"
)

// sockaddrArg shows a sockaddr; its length is the next argument (input)
// or the socklen the kernel wrote (output).
func (x *ctx) sockaddrArg(a int, b []byte, out bool) string {
	n := len(b)
	if out {
		if ln := x.data(a+1, true); len(ln) >= 4 && int(le.Uint32(ln)) < n {
			n = int(le.Uint32(ln))
		}
	} else if l := int(uint32(x.arg(a + 1))); l < n {
		n = l
	}
	return sockaddrStr(quoter(x.o.Hex), b[:n])
}

func sockaddrStr(h quoter, b []byte) string {
	if len(b) < 2 {
		return "{}"
	}
	fam := uint64(le.Uint16(b))
	s := "{sa_family=" + sockDomains.enum(fam, false)
	be16 := func(off int) uint16 { return uint16(b[off])<<8 | uint16(b[off+1]) }
	switch {
	case fam == unix.AF_UNIX:
		if len(b) > 2 {
			p := b[2:]
			if p[0] == 0 && len(p) > 1 {
				s += ", sun_path=@" + h.quote(p[1:], len(p)-1, true, false)
			} else if p[0] != 0 {
				s += ", sun_path=" + h.quote(p, len(p), true, false)
			}
		}
	case fam == unix.AF_INET && len(b) >= 8:
		ip := netip.AddrFrom4([4]byte(b[4:8]))
		s += fmt.Sprintf(", sin_port=htons(%d), sin_addr=inet_addr(%q)", be16(2), ip.String())
	case fam == unix.AF_INET6 && len(b) >= 24:
		ip := netip.AddrFrom16([16]byte(b[8:24]))
		s += fmt.Sprintf(", sin6_port=htons(%d), sin6_flowinfo=htonl(%d), inet_pton(AF_INET6, %q, &sin6_addr)",
			be16(2), uint32(be16(4))<<16|uint32(be16(6)), ip.String())
		if len(b) >= 28 {
			s += fmt.Sprintf(", sin6_scope_id=%d", le.Uint32(b[24:]))
		}
	case fam == unix.AF_NETLINK && len(b) >= 12:
		s += fmt.Sprintf(", nl_pid=%d, nl_groups=%08x", le.Uint32(b[4:]), le.Uint32(b[8:]))
	case len(b) > 2:
		s += ", sa_data=" + h.quote(b[2:], len(b)-2, false, false)
	}
	return s + "}"
}

// iovStr decodes an Iov capture: [{iov_base="ab", iov_len=2}, ...].
func (x *ctx) iovStr(b []byte, out bool) string { return x.iovList(b, int(x.arg(2)), out) }

// iovList shows count iovecs of an Iov capture's bytes b; out: the data
// read, as much as the return value says.
func (x *ctx) iovList(b []byte, count int, out bool) string {
	// Appended, not Sprintf'd and joined: a writev loop's lines are this.
	s := make([]byte, 0, 64)
	s = append(s, '[')
	left := x.c.Ret
	i := 0
	for ; len(b) >= 24 && i < count; i++ {
		base, ln := le.Uint64(b), le.Uint64(b[8:])
		n, unread := iovCount(le.Uint64(b[16:]))
		b = b[24:]
		if n > len(b) {
			n = len(b)
		}
		data := b[:n]
		b = b[n:]
		shown := ln
		if out && uint64(left) < shown {
			shown = uint64(max(left, 0))
		}
		if out {
			left -= int64(shown)
		}
		if i > 0 {
			s = append(s, ", "...)
		}
		s = append(s, "{iov_base="...)
		if base == 0 || unread || out && x.failed() {
			s = append(s, ptr(base)...)
		} else {
			if uint64(len(data)) > shown {
				data = data[:shown]
			}
			s = append(s, quoter(x.o.Hex).quote(data, x.strsize, false, false)...)
			if shown > uint64(len(data)) && len(data) == x.strsize {
				s = append(s, "..."...)
			}
		}
		s = append(s, ", iov_len="...)
		s = dec.AppendUint(s, ln)
		s = append(s, '}')
	}
	if i < count {
		if i > 0 {
			s = append(s, ", "...)
		}
		s = append(s, "..."...)
	}
	return string(append(s, ']'))
}

// pollFdsStr: [{fd=3, events=POLLIN}]; revents: only the fds with
// events returned, as strace's result comment. As strace, at most max
// elements show (-s), then "..."; "..." too where fewer than n were read
// (maxPollFds).
func pollFdsStr(b []byte, n int, revents bool, max int) string {
	var parts []string
	i := 0
	for ; i < n && len(b) >= 8*(i+1); i++ {
		e := b[8*i:]
		fd := int32(le.Uint32(e))
		if revents {
			if re := le.Uint16(e[6:]); re != 0 {
				if len(parts) == max {
					break
				}
				parts = append(parts, fmt.Sprintf("{fd=%d, revents=%s}", fd, pollEvents.flags(uint64(re))))
			}
			continue
		}
		if len(parts) == max {
			break
		}
		parts = append(parts, fmt.Sprintf("{fd=%d, events=%s}", fd, pollEvents.flags(uint64(le.Uint16(e[4:])))))
	}
	if i < n {
		parts = append(parts, "...")
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func (x *ctx) pollResult() string {
	r := x.c.Ret
	if r == 0 {
		return "0 (Timeout)"
	}
	b := x.data(0, true)
	if b == nil {
		return fmt.Sprint(r)
	}
	s := pollFdsStr(b, int(uint32(x.arg(1))), true, x.strsize)
	if t := x.data(2, true); x.in.Name == "ppoll" && len(t) >= 16 && x.arg(2) != 0 {
		s += fmt.Sprintf(", left {tv_sec=%d, tv_nsec=%d}", int64(le.Uint64(t)), int64(le.Uint64(t[8:])))
	}
	return fmt.Sprintf("%d (%s)", r, s)
}

// selectResult: "1 (in [0], left {tv_sec=0, tv_nsec=0})".
func (x *ctx) selectResult() string {
	r := x.c.Ret
	if r == 0 {
		return "0 (Timeout)"
	}
	n := int(int32(x.arg(0)))
	var parts []string
	for i, name := range []string{"in", "out", "except"} {
		if b := x.data(i+1, true); b != nil && x.arg(i+1) != 0 {
			if s := fdSetStr(b, n); s != "[]" {
				parts = append(parts, name+" "+s)
			}
		}
	}
	if b := x.data(4, true); len(b) >= 16 && x.arg(4) != 0 {
		unit := "tv_nsec"
		if x.in.Name == "select" {
			unit = "tv_usec"
		}
		parts = append(parts, fmt.Sprintf("left {tv_sec=%d, %s=%d}", int64(le.Uint64(b)), unit, int64(le.Uint64(b[8:]))))
	}
	if len(parts) == 0 {
		return fmt.Sprint(r)
	}
	return fmt.Sprintf("%d (%s)", r, strings.Join(parts, ", "))
}

func epollEventStr(b []byte) string {
	d := le.Uint64(b[4:])
	return fmt.Sprintf("{events=%s, data={u32=%d, u64=%d}}", epollEvents.flags(uint64(le.Uint32(b))), uint32(d), d)
}

// epollEventsStr: the n events returned, at most max of them (-s), then
// "...", as strace (and where fewer were read: maxEpollEvents).
func epollEventsStr(b []byte, n, max int) string {
	var parts []string
	for ; len(b) >= sizeEpollEv && len(parts) < min(n, max); b = b[sizeEpollEv:] {
		parts = append(parts, epollEventStr(b))
	}
	if len(parts) < n {
		parts = append(parts, "...")
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// clone3Str shows struct clone_args' fields the flags make relevant,
// as strace does (without the exit part "=> {parent_tid=[N]}").
// clone_args' pointers the kernel writes through (linux/sched.h).
const (
	clone3PidFD     = 8
	clone3ParentTID = 24
)

// clone3Args is clone3's struct and size, and after the struct what the
// kernel wrote: " => {pidfd=[N], parent_tid=[N]}". With either flag set
// the whole call shows at its return (strace splits it there).
func (x *ctx) clone3Args() ([]string, int) {
	s, _ := x.render(0, KindClone3)
	size := strconv.FormatUint(x.arg(1), 10)
	b := x.data(0, false)
	if x.arg(0) == 0 || len(b) < 8 || x.o.Terse || le.Uint64(b)&(unix.CLONE_PIDFD|unix.CLONE_PARENT_SETTID) == 0 {
		return []string{s, size}, 2
	}
	if x.c.Returned && !x.failed() {
		var f fields
		for _, e := range []struct {
			flag uint64
			name string
			off  int
		}{{unix.CLONE_PIDFD, "pidfd", clone3PidFD}, {unix.CLONE_PARENT_SETTID, "parent_tid", clone3ParentTID}} {
			if le.Uint64(b)&e.flag == 0 {
				continue
			}
			v := "?" // unread, as strace shows an address it cannot read
			if len(b) >= e.off+8 {
				v = hex(le.Uint64(b[e.off:]))
			}
			if d := x.indirect(0, e.off, true); len(d) >= 4 {
				v = "[" + strconv.Itoa(int(int32(le.Uint32(d)))) + "]"
			}
			f.add(e.name, v)
		}
		s += " => " + f.close()
	}
	return []string{s, size}, 0
}

// indirect is the capture of argument a read through the pointer at
// off (Capture.Indirect), of the exit's side or the entry's.
func (x *ctx) indirect(a, off int, exit bool) []byte {
	side := x.c.Entry
	if exit {
		side = x.c.Exit
	}
	for i, c := range x.in.Captures {
		if c.Indirect && c.Exit == exit && c.Arg == a && c.Off == off && i < len(side) {
			return side[i]
		}
	}
	return nil
}

func clone3Str(b []byte) string {
	u := func(off int) uint64 { return le.Uint64(b[off:]) }
	fl := u(0)
	s := "{flags=" + cloneFlags.flags(fl)
	if fl&unix.CLONE_PIDFD != 0 {
		s += ", pidfd=" + ptr(u(8))
	}
	if fl&(unix.CLONE_CHILD_SETTID|unix.CLONE_CHILD_CLEARTID) != 0 {
		s += ", child_tid=" + ptr(u(16))
	}
	if fl&unix.CLONE_PARENT_SETTID != 0 {
		s += ", parent_tid=" + ptr(u(24))
	}
	sig := "0"
	if u(32) != 0 {
		sig = signalName(int(u(32)))
	}
	s += ", exit_signal=" + sig + ", stack=" + ptr(u(40)) + ", stack_size=" + hex(u(48))
	if fl&unix.CLONE_SETTLS != 0 {
		s += ", tls=" + ptr(u(56))
	}
	if len(b) >= 88 {
		if u(72) != 0 {
			s += fmt.Sprintf(", set_tid=%s, set_tid_size=%d", ptr(u(64)), u(72))
		}
		if fl&unix.CLONE_INTO_CGROUP != 0 {
			s += fmt.Sprintf(", cgroup=%d", u(80))
		}
	}
	return s + "}"
}
