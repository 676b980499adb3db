//go:build linux && amd64

package syscalls

import (
	"encoding/binary"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestFullStructs: termios, struct stat of a character device and
// getdents64's entries, abbreviated and as strace 6.1 -v printed them.
func TestFullStructs(t *testing.T) {
	tio := make([]byte, 64)
	binary.LittleEndian.PutUint32(tio, unix.ICRNL|unix.IXON)
	binary.LittleEndian.PutUint32(tio[4:], unix.OPOST|unix.ONLCR)
	binary.LittleEndian.PutUint32(tio[8:], unix.B38400|unix.CS8|unix.CREAD|unix.B9600<<16)
	binary.LittleEndian.PutUint32(tio[12:], unix.ISIG|unix.ECHOE)
	copy(tio[17:], []byte{3, 0x1c, 0x7f, 0x15, 4, 0, 1})
	get := call(t, "ioctl", []uint64{4, unix.TCGETS, 0x1000}, 0, nil, map[int][]byte{2: tio})
	abbrev := `ioctl(4, TCGETS, {c_iflag=ICRNL|IXON, c_oflag=NL0|CR0|TAB0|BS0|VT0|FF0|OPOST|ONLCR, c_cflag=B38400|B9600<<IBSHIFT|CS8|CREAD, c_lflag=ISIG|ECHOE, ...}) = 0`
	if got := Line(get, &Options{StrSize: 32}); got != abbrev {
		t.Errorf("TCGETS:\n got %s\nwant %s", got, abbrev)
	}
	full := `ioctl(4, TCGETS, {c_iflag=ICRNL|IXON, c_oflag=NL0|CR0|TAB0|BS0|VT0|FF0|OPOST|ONLCR, c_cflag=B38400|B9600<<IBSHIFT|CS8|CREAD, c_lflag=ISIG|ECHOE, c_line=N_TTY, c_cc=[[VINTR]=0x3, [VQUIT]=0x1c, [VERASE]=0x7f, [VKILL]=0x15, [VEOF]=0x4, [VTIME]=0, [VMIN]=0x1, [VSWTC]=0, [VSTART]=0, [VSTOP]=0, [VSUSP]=0, [VEOL]=0, [VREPRINT]=0, [VDISCARD]=0, [VWERASE]=0, [VLNEXT]=0, [VEOL2]=0, [17]=0, [18]=0]}) = 0`
	if got := Line(get, &Options{StrSize: 32, Full: true}); got != full {
		t.Errorf("TCGETS -v:\n got %s\nwant %s", got, full)
	}
	if got, want := Line(get, &Options{StrSize: 32, Terse: true}), `ioctl(4, TCGETS, 0x1000) = 0`; got != want {
		t.Errorf("TCGETS -e verbose=none:\n got %s\nwant %s", got, want)
	}
	// clone3 under -e verbose=none: the struct's address, and nothing of
	// what the kernel wrote, as strace.
	c3 := call(t, "clone3", []uint64{0x2000, 88}, 20726, map[int][]byte{0: u64s(unix.CLONE_PARENT_SETTID, 0, 0, 0x7f00, 0, 0, 0, 0, 0, 0, 0)}, map[int][]byte{0: u32s(20726)})
	if got, want := Line(c3, &Options{StrSize: 32, Terse: true}), `clone3(0x2000, 88) = 20726`; got != want {
		t.Errorf("clone3 -e verbose=none:\n got %s\nwant %s", got, want)
	}
	set := call(t, "ioctl", []uint64{4, unix.TCSETSW, 0x1000}, 0, map[int][]byte{2: tio}, nil)
	if got, want := Line(set, &Options{StrSize: 32}), `ioctl(4, SNDCTL_TMR_STOP or TCSETSW, {c_iflag=ICRNL|IXON, c_oflag=NL0|CR0|TAB0|BS0|VT0|FF0|OPOST|ONLCR, c_cflag=B38400|B9600<<IBSHIFT|CS8|CREAD, c_lflag=ISIG|ECHOE, ...}) = 0`; got != want {
		t.Errorf("TCSETSW:\n got %s\nwant %s", got, want)
	}

	st := make([]byte, sizeStat)
	binary.LittleEndian.PutUint64(st, unix.Mkdev(0, 6))
	binary.LittleEndian.PutUint64(st[8:], 3)
	binary.LittleEndian.PutUint64(st[16:], 1)
	binary.LittleEndian.PutUint32(st[24:], unix.S_IFCHR|0o666)
	binary.LittleEndian.PutUint64(st[40:], unix.Mkdev(1, 3))
	binary.LittleEndian.PutUint64(st[56:], 4096)
	for i, v := range []uint64{1795485666, 495003062, 1795485666, 0, 0, 0} {
		binary.LittleEndian.PutUint64(st[72+8*i:], v)
	}
	defer func(l *time.Location) { time.Local = l }(time.Local)
	time.Local = time.UTC // strace writes local time
	fstat := call(t, "fstat", []uint64{0, 0x2000}, 0, nil, map[int][]byte{1: st})
	want := `fstat(0, {st_dev=makedev(0, 0x6), st_ino=3, st_mode=S_IFCHR|0666, st_nlink=1, st_uid=0, st_gid=0, st_blksize=4096, st_blocks=0, st_rdev=makedev(0x1, 0x3), ` +
		`st_atime=1795485666 /* 2026-11-24T02:01:06.495003062+0000 */, st_atime_nsec=495003062, st_mtime=1795485666 /* 2026-11-24T02:01:06+0000 */, st_mtime_nsec=0, st_ctime=0, st_ctime_nsec=0}) = 0`
	if got := Line(fstat, &Options{StrSize: 32, Full: true}); got != want {
		t.Errorf("fstat -v:\n got %s\nwant %s", got, want)
	}

	var d []byte
	for _, e := range []struct {
		name string
		typ  byte
	}{{".", 4}, {"a", 8}} {
		rec := make([]byte, 24)
		binary.LittleEndian.PutUint64(rec, 10)
		binary.LittleEndian.PutUint64(rec[8:], 7)
		binary.LittleEndian.PutUint16(rec[16:], 24)
		rec[18] = e.typ
		copy(rec[19:], e.name)
		d = append(d, rec...)
	}
	ents := call(t, "getdents64", []uint64{3, 0x3000, 32768}, int64(len(d)), nil, map[int][]byte{1: d})
	if got, want := Line(ents, &Options{StrSize: 32, Full: true}), `getdents64(3, [{d_ino=10, d_off=7, d_reclen=24, d_type=DT_DIR, d_name="."}, {d_ino=10, d_off=7, d_reclen=24, d_type=DT_REG, d_name="a"}], 32768) = 48`; got != want {
		t.Errorf("getdents64 -v:\n got %s\nwant %s", got, want)
	}
	if got, want := Line(ents, &Options{StrSize: 32}), `getdents64(3, 0x3000 /* 2 entries */, 32768) = 48`; got != want {
		t.Errorf("getdents64:\n got %s\nwant %s", got, want)
	}
}
