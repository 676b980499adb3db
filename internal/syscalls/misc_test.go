//go:build linux && amd64

package syscalls

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestTable(t *testing.T) {
	if n := len(All()); n < 360 {
		t.Fatalf("only %d calls", n)
	}
	for i, in := range All() {
		if i > 0 && All()[i-1].Nr >= in.Nr {
			t.Fatalf("not sorted at %s", in.Name)
		}
		if Lookup(in.Nr) != in || ByName(in.Name) != in {
			t.Fatalf("lookup of %s", in.Name)
		}
	}
	op := ByName("openat")
	if op.Nr != unix.SYS_OPENAT || len(op.Args) != 4 || op.Args[1].Name != "filename" || op.Args[1].CType != "const char *" {
		t.Fatalf("openat: %+v", op)
	}
	if Lookup(100000) != nil || ByName("nope") != nil {
		t.Fatal("unknown call found")
	}
	if ByName("execve").NoReturn || !ByName("exit_group").NoReturn {
		t.Fatal("NoReturn")
	}
}

func TestHeadTail(t *testing.T) {
	c := call(t, "read", []uint64{3, 0x1000, 8192}, 6, nil, map[int][]byte{1: []byte("hello\n")})
	if h, tl := Head(c, nil), Tail(c, nil); h != "read(3, " || tl != `"hello\n", 8192)` {
		t.Errorf("read: %q %q", h, tl)
	}
	c.Returned = false
	if h := Head(c, nil) + " <unfinished ...>"; h != "read(3,  <unfinished ...>" {
		t.Errorf("unfinished: %q", h)
	}
	if r := string(new(Formatter).AppendResult(nil, c, nil)); r != "?" {
		t.Errorf("result %q", r)
	}
	o := call(t, "openat", []uint64{atCWD, 1, 0}, 3, map[int][]byte{1: cs("/etc/hostname")}, nil)
	if h, tl := Head(o, nil), Tail(o, nil); h != `openat(AT_FDCWD, "/etc/hostname", O_RDONLY` || tl != ")" {
		t.Errorf("openat: %q %q", h, tl)
	}
	p := call(t, "pipe2", []uint64{0x1000, 0}, 0, nil, map[int][]byte{0: u32s(3, 4)})
	if h, tl := Head(p, nil), Tail(p, nil); h != "pipe2(" || tl != "[3, 4], 0)" {
		t.Errorf("pipe2: %q %q", h, tl)
	}
	// -y: fds and AT_FDCWD get their paths, and so does a returned fd.
	y := &Options{FdPath: func(fd int) string {
		return map[int]string{3: "/etc/hostname", unix.AT_FDCWD: "/tmp/st"}[fd]
	}}
	if got, want := Line(o, y), `openat(AT_FDCWD</tmp/st>, "/etc/hostname", O_RDONLY) = 3</etc/hostname>`; got != want {
		t.Errorf("-y: %s", got)
	}
}

func TestStrings(t *testing.T) {
	for _, tt := range []struct {
		in           string
		max          int
		nul, hex     bool
		want         string
		wantEllipsis bool
	}{
		{"abc\x00zzz", 32, true, false, `"abc"`, false},
		{"abcdef", 3, true, false, `"abc"...`, true},
		{"abc\x00", 3, true, false, `"abc"`, false},
		{"\x00\x01" + "1", 32, false, false, `"\0\0011"`, false},
		{"\x1b[0m\r\v\f", 32, false, false, `"\33[0m\r\v\f"`, false},
		{"\xe3\x6b", 32, false, true, `"\xe3\x6b"`, false},
	} {
		if got := quote([]byte(tt.in), tt.max, tt.nul, tt.hex); got != tt.want {
			t.Errorf("quote(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
	// -s 5: strings cut, paths not (strace -s 5 on cat).
	e := call(t, "execve", []uint64{1, 2, 3}, 0, map[int][]byte{0: cs("/bin/cat"), 1: []byte("/bin/c\x00/etc/h\x00\x00"), 2: []byte("\x00\x00")}, nil)
	if got, want := Line(e, &Options{StrSize: 5}), `execve("/bin/cat", ["/bin/"..., "/etc/"...], 0x3 /* 1 var */) = 0`; got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}

func TestMaxFor(t *testing.T) {
	w := ByName("write").Captures[0]
	if w.LenArg != 2 || MaxFor(w, 32) != 33 {
		t.Errorf("write: %+v %d", w, MaxFor(w, 32))
	}
	o := ByName("openat").Captures[0]
	if !o.Str || MaxFor(o, 32) != pathMax {
		t.Errorf("openat path: %+v", o)
	}
	if a := ByName("execve").Captures[1]; !a.StrArray || MaxFor(a, 32) != maxArray {
		t.Errorf("execve argv: %+v", a)
	}
	s := ByName("fstat").Captures[0]
	if !s.Exit || MaxFor(s, 32) != sizeStat {
		t.Errorf("fstat: %+v", s)
	}
}

func TestSelect(t *testing.T) {
	got, err := Select("open*")
	if err != nil || len(got) < 3 || got[0].Name != "open" {
		t.Fatalf("open*: %v %v", got, err)
	}
	names := func(c Class) map[string]bool {
		m := map[string]bool{}
		for _, in := range All() {
			if in.Classes&c != 0 {
				m[in.Name] = true
			}
		}
		return m
	}
	file, desc := names(ClassFile), names(ClassDesc)
	for _, n := range []string{"openat", "execve", "newfstatat", "statx", "readlink", "getcwd", "unlinkat"} {
		if !file[n] {
			t.Errorf("%s not in %%file", n)
		}
	}
	for _, n := range []string{"read", "close", "openat", "mmap", "pipe2", "socket", "epoll_wait"} {
		if !desc[n] {
			t.Errorf("%s not in %%desc", n)
		}
	}
	if file["read"] || desc["getpid"] || desc["munmap"] {
		t.Error("wrong class member")
	}
	if _, err := Select("opnat"); !errors.Is(err, ErrUnknown) || !strings.Contains(err.Error(), "did you mean openat") {
		t.Errorf("opnat: %v", err)
	}
	if _, err := Select("%nope"); !errors.Is(err, ErrUnknownClass) || !strings.Contains(err.Error(), "%file") {
		t.Errorf("%%nope: %v", err)
	}
	if _, err := Select("zz*"); !errors.Is(err, ErrUnknown) {
		t.Errorf("zz*: %v", err)
	}
}

func TestSignalExitErrno(t *testing.T) {
	si := make([]byte, 128)
	put := func(off int, v uint32) { copy(si[off:], u32s(v)) }
	put(0, 17)
	put(8, 2)
	put(16, 15467)
	put(24, 15)
	if got, want := Signal(si), "--- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_KILLED, si_pid=15467, si_uid=0, si_status=SIGTERM, si_utime=0, si_stime=0} ---"; got != want {
		t.Errorf("got %s", got)
	}
	si = make([]byte, 128)
	put(0, 15)
	put(16, 15465)
	if got, want := Signal(si), "--- SIGTERM {si_signo=SIGTERM, si_code=SI_USER, si_pid=15465, si_uid=0} ---"; got != want {
		t.Errorf("got %s", got)
	}
	si = make([]byte, 128)
	put(0, 11)
	put(8, 1)
	if got, want := Signal(si), "--- SIGSEGV {si_signo=SIGSEGV, si_code=SEGV_MAPERR, si_addr=NULL} ---"; got != want {
		t.Errorf("got %s", got)
	}
	for st, want := range map[unix.WaitStatus]string{
		0: "+++ exited with 0 +++", 3 << 8: "+++ exited with 3 +++",
		9: "+++ killed by SIGKILL +++", 11 | 0x80: "+++ killed by SIGSEGV (core dumped) +++",
	} {
		if got := Exit(st); got != want {
			t.Errorf("Exit(%#x) = %s", uint32(st), got)
		}
	}
	if n, ok := ErrnoName(-2); !ok || n != "ENOENT" {
		t.Errorf("ErrnoName(-2) = %s", n)
	}
	if _, ok := ErrnoName(3); ok {
		t.Error("ErrnoName(3) ok")
	}
	for ret, want := range map[int64]string{
		-512: "? ERESTARTSYS (To be restarted if SA_RESTART is set)",
		-514: "? ERESTARTNOHAND (To be restarted if no handler)",
		-516: "? ERESTART_RESTARTBLOCK (Interrupted by signal)",
		-513: "? ERESTARTNOINTR (To be restarted)",
		-515: "-1 ENOIOCTLCMD (No ioctl command)",
		-11:  "-1 EAGAIN (Resource temporarily unavailable)",
	} {
		if got := errResult(ret); got != want {
			t.Errorf("%d: %s", ret, got)
		}
	}
}

// TestSelectListsAndNegation: strace's trace=a,b and trace=!a,b.
func TestSelectListsAndNegation(t *testing.T) {
	both, err := Select("openat,read")
	if err != nil || len(both) != 2 || both[0].Name != "read" || both[1].Name != "openat" {
		t.Fatalf("openat,read: %v %v", both, err)
	}
	rest, err := Select("!openat,read")
	if err != nil || len(rest) != len(All())-2 {
		t.Fatalf("!openat,read: %d calls, %v; want %d", len(rest), err, len(All())-2)
	}
	for _, in := range rest {
		if in.Name == "openat" || in.Name == "read" {
			t.Fatalf("!openat,read selects %s", in.Name)
		}
	}
	if _, err := Select("!opnat"); err == nil {
		t.Error("!opnat: no error")
	}
}

// TestIovUnread: an iovec whose bytes cannot be read shows its address,
// as strace shows it, between elements whose bytes are shown.
func TestIovUnread(t *testing.T) {
	le := binary.LittleEndian
	arr := make([]byte, 48)
	for i, v := range []uint64{0x2000, 3, 0x10, 4, 0x2000, 2} {
		le.PutUint64(arr[8*i:], v)
	}
	mem := map[uint64][]byte{0x1000: arr, 0x2000: []byte("abc")}
	read := func(addr uint64, p []byte) error {
		for a, b := range mem {
			if addr >= a && addr+uint64(len(p)) <= a+uint64(len(b)) {
				copy(p, b[addr-a:])
				return nil
			}
		}
		return errors.New("unreadable")
	}
	args := [6]uint64{3, 0x1000, 3}
	caps := ReadSide(Lookup(unix.SYS_WRITEV), args, 9, 0, false, 32, read)
	got := Line(&Call{Nr: unix.SYS_WRITEV, Args: args, Ret: 9, Returned: true, Entry: caps}, &Options{StrSize: 32})
	want := `writev(3, [{iov_base="abc", iov_len=3}, {iov_base=0x10, iov_len=4}, {iov_base="ab", iov_len=2}], 3) = 9`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
