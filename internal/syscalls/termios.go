//go:build linux && amd64

package syscalls

import (
	"strconv"

	"golang.org/x/sys/unix"
)

// The kernel's struct termios (TCGETS, TCSETS*), as strace's term.c
// shows it: the four flag words, then, unabbreviated (-v), the line
// discipline and the control characters.

const sizeTermios = 36 // four flag words, c_line, c_cc[19]

var termIflags = xlat{
	{unix.IGNBRK, "IGNBRK"}, {unix.BRKINT, "BRKINT"}, {unix.IGNPAR, "IGNPAR"}, {unix.PARMRK, "PARMRK"},
	{unix.INPCK, "INPCK"}, {unix.ISTRIP, "ISTRIP"}, {unix.INLCR, "INLCR"}, {unix.IGNCR, "IGNCR"},
	{unix.ICRNL, "ICRNL"}, {unix.IUCLC, "IUCLC"}, {unix.IXON, "IXON"}, {unix.IXANY, "IXANY"},
	{unix.IXOFF, "IXOFF"}, {unix.IMAXBEL, "IMAXBEL"}, {unix.IUTF8, "IUTF8"},
}

var termOflags = xlat{
	{unix.OPOST, "OPOST"}, {unix.OLCUC, "OLCUC"}, {unix.ONLCR, "ONLCR"}, {unix.OCRNL, "OCRNL"},
	{unix.ONOCR, "ONOCR"}, {unix.ONLRET, "ONLRET"}, {unix.OFILL, "OFILL"}, {unix.OFDEL, "OFDEL"},
}

// termOdelays are c_oflag's delay fields, each shown by name first.
var termOdelays = []struct {
	mask uint64
	x    xlat
	dfl  string
}{
	{unix.NLDLY, xlat{{unix.NL0, "NL0"}, {unix.NL1, "NL1"}}, "NL?"},
	{unix.CRDLY, xlat{{unix.CR0, "CR0"}, {unix.CR1, "CR1"}, {unix.CR2, "CR2"}, {unix.CR3, "CR3"}}, "CR?"},
	{unix.TABDLY, xlat{{unix.XTABS, "XTABS"}, {unix.TAB0, "TAB0"}, {unix.TAB1, "TAB1"}, {unix.TAB2, "TAB2"}}, "TAB?"},
	{unix.BSDLY, xlat{{unix.BS1, "BS1"}, {unix.BS0, "BS0"}}, "BS?"},
	{unix.VTDLY, xlat{{unix.VT0, "VT0"}, {unix.VT1, "VT1"}}, "VT?"},
	{unix.FFDLY, xlat{{unix.FF0, "FF0"}, {unix.FF1, "FF1"}}, "FF?"},
}

var termCflags = xlat{
	{unix.CSTOPB, "CSTOPB"}, {unix.CREAD, "CREAD"}, {unix.PARENB, "PARENB"}, {unix.PARODD, "PARODD"},
	{unix.HUPCL, "HUPCL"}, {unix.CLOCAL, "CLOCAL"}, {unix.CMSPAR, "CMSPAR"}, {unix.CRTSCTS, "CRTSCTS"},
}

var termCsize = xlat{{unix.CS5, "CS5"}, {unix.CS6, "CS6"}, {unix.CS7, "CS7"}, {unix.CS8, "CS8"}}

var termLflags = xlat{
	{unix.ISIG, "ISIG"}, {unix.ICANON, "ICANON"}, {unix.XCASE, "XCASE"}, {unix.ECHO, "ECHO"},
	{unix.ECHOE, "ECHOE"}, {unix.ECHOK, "ECHOK"}, {unix.ECHONL, "ECHONL"}, {unix.NOFLSH, "NOFLSH"},
	{unix.IEXTEN, "IEXTEN"}, {unix.ECHOCTL, "ECHOCTL"}, {unix.ECHOPRT, "ECHOPRT"}, {unix.ECHOKE, "ECHOKE"},
	{unix.FLUSHO, "FLUSHO"}, {unix.PENDIN, "PENDIN"}, {unix.TOSTOP, "TOSTOP"}, {unix.EXTPROC, "EXTPROC"},
}

var bauds = xlat{
	{unix.B0, "B0"}, {unix.B50, "B50"}, {unix.B75, "B75"}, {unix.B110, "B110"}, {unix.B134, "B134"},
	{unix.B150, "B150"}, {unix.B200, "B200"}, {unix.B300, "B300"}, {unix.B600, "B600"}, {unix.B1200, "B1200"},
	{unix.B1800, "B1800"}, {unix.B2400, "B2400"}, {unix.B4800, "B4800"}, {unix.B9600, "B9600"},
	{unix.B19200, "B19200"}, {unix.B38400, "B38400"}, {unix.B57600, "B57600"}, {unix.B115200, "B115200"},
	{unix.B230400, "B230400"}, {unix.B460800, "B460800"}, {unix.B500000, "B500000"}, {unix.B576000, "B576000"},
	{unix.B921600, "B921600"}, {unix.B1000000, "B1000000"}, {unix.B1152000, "B1152000"},
	{unix.B1500000, "B1500000"}, {unix.B2000000, "B2000000"}, {unix.B2500000, "B2500000"},
	{unix.B3000000, "B3000000"}, {unix.B3500000, "B3500000"}, {unix.B4000000, "B4000000"}, {unix.BOTHER, "BOTHER"},
}

// termiosCC names c_cc's indices.
var termiosCC = xlat{
	{unix.VINTR, "VINTR"}, {unix.VQUIT, "VQUIT"}, {unix.VERASE, "VERASE"}, {unix.VKILL, "VKILL"},
	{unix.VEOF, "VEOF"}, {unix.VTIME, "VTIME"}, {unix.VMIN, "VMIN"}, {unix.VSWTC, "VSWTC"},
	{unix.VSTART, "VSTART"}, {unix.VSTOP, "VSTOP"}, {unix.VSUSP, "VSUSP"}, {unix.VEOL, "VEOL"},
	{unix.VREPRINT, "VREPRINT"}, {unix.VDISCARD, "VDISCARD"}, {unix.VWERASE, "VWERASE"},
	{unix.VLNEXT, "VLNEXT"}, {unix.VEOL2, "VEOL2"},
}

const ibshift = 16 // CIBAUD's shift

// termiosStr is a struct termios; full: strace -v's whole form.
func termiosStr(b []byte, full bool) string {
	var f fields
	iflag, oflag := uint64(le.Uint32(b)), uint64(le.Uint32(b[4:]))
	cflag, lflag := uint64(le.Uint32(b[8:])), uint64(le.Uint32(b[12:]))
	f.add("c_iflag", termIflags.flags(iflag))
	o := ""
	for _, d := range termOdelays {
		s, ok := d.x.name(oflag & d.mask)
		if !ok {
			s = d.dfl
		}
		o += s + "|"
		oflag &^= d.mask
	}
	f.add("c_oflag", o+termOflags.flags(oflag))
	c := bauds.enumOr(cflag&unix.CBAUD, "B???") + "|"
	if cflag&unix.CIBAUD != 0 {
		c += bauds.enumOr((cflag&unix.CIBAUD)>>ibshift, "B???") + "<<IBSHIFT|"
	}
	c += termCsize.enumOr(cflag&unix.CSIZE, "CS?") + "|"
	f.add("c_cflag", c+termCflags.flags(cflag&^(unix.CBAUD|unix.CIBAUD|unix.CSIZE)))
	f.add("c_lflag", termLflags.flags(lflag))
	if !full {
		return f.b.String() + ", ...}"
	}
	if b[16] == 0 {
		f.add("c_line", "N_TTY")
	} else {
		f.add("c_line", strconv.Itoa(int(b[16])))
	}
	// strace 6.1 adds nothing for a non-canonical mode (later ones put
	// c_cc[VMIN] and c_cc[VTIME] first).
	cc := b[17:sizeTermios]
	s := "["
	for i, v := range cc {
		if i > 0 {
			s += ", "
		}
		n, ok := termiosCC.name(uint64(i))
		if !ok {
			n = strconv.Itoa(i)
		}
		s += "[" + n + "]=" + hex(uint64(v))
	}
	f.add("c_cc", s+"]")
	return f.close()
}

// enumOr is v's name, or dfl.
func (x xlat) enumOr(v uint64, dfl string) string {
	if s, ok := x.name(v); ok {
		return s
	}
	return dfl
}
