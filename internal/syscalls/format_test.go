//go:build linux && amd64

package syscalls

import (
	"encoding/binary"
	"testing"

	"golang.org/x/sys/unix"
)

// call builds a Call for name with the captures given by argument index
// (entry and exit); missing captures stay nil.
func call(t *testing.T, name string, args []uint64, ret int64, entry, exit map[int][]byte) *Call {
	t.Helper()
	in := ByName(name)
	if in == nil {
		t.Fatalf("no call %q", name)
	}
	c := &Call{Nr: in.Nr, Ret: ret, Returned: true}
	copy(c.Args[:], args)
	c.Entry = make([][]byte, len(in.Captures))
	c.Exit = make([][]byte, len(in.Captures))
	for i, cp := range in.Captures {
		if cp.Exit {
			c.Exit[i] = exit[cp.Arg]
		} else {
			c.Entry[i] = entry[cp.Arg]
		}
	}
	return c
}

func cs(s string) []byte { return append([]byte(s), 0) }

func u32s(v ...uint32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], x)
	}
	return b
}

func u64s(v ...uint64) []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], x)
	}
	return b
}

const atCWD = uint64(0xffffffffffffff9c) // AT_FDCWD as a register holds it

func statBuf(mode uint32, size int64, rdev uint64) []byte {
	b := make([]byte, sizeStat)
	binary.LittleEndian.PutUint32(b[24:], mode)
	binary.LittleEndian.PutUint64(b[40:], rdev)
	binary.LittleEndian.PutUint64(b[48:], uint64(size))
	return b
}

// The expected lines were printed by strace 6.1 on this machine for
// small C programs making the same calls (strace -f -qq).
func TestLineMatchesStrace(t *testing.T) {
	sig := make([]byte, 32)
	binary.LittleEndian.PutUint64(sig[16:], 0x7ff47c0c5050)
	binary.LittleEndian.PutUint64(sig[8:], 0x14000000)
	binary.LittleEndian.PutUint64(sig[0:], 1)
	sigRT := make([]byte, 32)
	binary.LittleEndian.PutUint64(sigRT[0:], 0x7f9de514f720)
	binary.LittleEndian.PutUint64(sigRT[8:], 0x1c000004)
	binary.LittleEndian.PutUint64(sigRT[16:], 0x7f9de5105050)
	sx := make([]byte, sizeStatx)
	binary.LittleEndian.PutUint32(sx, 0x1fff)
	binary.LittleEndian.PutUint16(sx[28:], 0o100755)
	binary.LittleEndian.PutUint64(sx[40:], 3)
	un := make([]byte, sizeUtsname)
	copy(un, "Linux")
	copy(un[65:], "vm")
	in4 := []byte{2, 0, 0, 53, 127, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0}
	in6 := make([]byte, 28)
	in6[0], in6[3], in6[23] = 10, 80, 1
	sun := append([]byte{1, 0}, cs("/tmp/nonexist.sock")...)
	sun = append(sun, make([]byte, 110-len(sun))...)
	iov := append(append(u64s(0x1000, 2, 2), "ab"...), append(u64s(0x2000, 4, 4), "cde\n"...)...)
	riov := append(append(u64s(0x1000, 3, 3), "abc"...), append(u64s(0x2000, 10, 4), "defg"...)...)
	clone3 := u64s(0x3d0f00, 0, 0x7f9de50c5990, 0x7f9de50c5990, 0, 0x7f9de48c5000, 0x7fff80, 0x7f9de50c56c0, 0, 0, 0)
	sysinfo := make([]byte, sizeSysinfo)
	copy(sysinfo, u64s(9955, 1760, 29632, 45664, 25276510208, 24829968384, 9068544, 4829184, 0, 0))
	binary.LittleEndian.PutUint16(sysinfo[80:], 84)
	binary.LittleEndian.PutUint32(sysinfo[104:], 1)
	dents := make([]byte, 128)
	for i := 0; i < 5; i++ {
		binary.LittleEndian.PutUint16(dents[i*24+16:], 24)
	}
	hostname := "/etc/hostname"

	tests := []struct {
		c    *Call
		want string
	}{
		{call(t, "openat", []uint64{atCWD, 1, unix.O_RDONLY | unix.O_CLOEXEC}, 3, map[int][]byte{1: cs(hostname)}, nil),
			`openat(AT_FDCWD, "/etc/hostname", O_RDONLY|O_CLOEXEC) = 3`},
		{call(t, "openat", []uint64{atCWD, 1, unix.O_WRONLY | unix.O_CREAT | unix.O_TRUNC, 0o644}, 4, map[int][]byte{1: cs("/nonexistent")}, nil),
			`openat(AT_FDCWD, "/nonexistent", O_WRONLY|O_CREAT|O_TRUNC, 0644) = 4`},
		{call(t, "openat", []uint64{atCWD, 1, unix.O_RDONLY | unix.O_DIRECTORY}, 15, map[int][]byte{1: cs("/tmp/st")}, nil),
			`openat(AT_FDCWD, "/tmp/st", O_RDONLY|O_DIRECTORY) = 15`},
		{call(t, "access", []uint64{1, unix.R_OK}, -2, map[int][]byte{0: cs("/etc/ld.so.preload")}, nil),
			`access("/etc/ld.so.preload", R_OK) = -1 ENOENT (No such file or directory)`},
		{call(t, "access", []uint64{1, 0}, 0, map[int][]byte{0: cs("/etc/passwd")}, nil), `access("/etc/passwd", F_OK) = 0`},
		{call(t, "read", []uint64{3, 0x1000, 100}, 3, nil, map[int][]byte{1: []byte("vm\n")}), `read(3, "vm\n", 100) = 3`},
		{call(t, "read", []uint64{3, 0x1000, 832}, 832, nil, map[int][]byte{1: []byte("\x7fELF\x02\x01\x01\x03\x00\x00\x00\x00\x00\x00\x00\x00\x03\x00>\x00\x01\x00\x00\x00\x10t\x02\x00\x00\x00\x00\x00\x00")}),
			`read(3, "\177ELF\2\1\1\3\0\0\0\0\0\0\0\0\3\0>\0\1\0\0\0\20t\2\0\0\0\0\0"..., 832) = 832`},
		{call(t, "write", []uint64{1, 0x1000, 13}, 13, map[int][]byte{1: []byte("hello\n\t\x01\xff\"\\ x")}, nil),
			`write(1, "hello\n\t\1\377\"\\ x", 13) = 13`},
		{call(t, "write", []uint64{1, 0x1000, 41}, 41, map[int][]byte{1: []byte("0123456789012345678901234567890123456789\n")[:33]}, nil),
			`write(1, "01234567890123456789012345678901"..., 41) = 41`},
		{call(t, "newfstatat", []uint64{3, 1, 0x2000, unix.AT_EMPTY_PATH}, 0, map[int][]byte{1: cs("")}, map[int][]byte{2: statBuf(0o100644, 33703, 0)}),
			`newfstatat(3, "", {st_mode=S_IFREG|0644, st_size=33703, ...}, AT_EMPTY_PATH) = 0`},
		{call(t, "newfstatat", []uint64{atCWD, 1, 0x7ffdb5e15370, unix.AT_SYMLINK_NOFOLLOW}, -2, map[int][]byte{1: cs("/nonex")}, nil),
			`newfstatat(AT_FDCWD, "/nonex", 0x7ffdb5e15370, AT_SYMLINK_NOFOLLOW) = -1 ENOENT (No such file or directory)`},
		{call(t, "newfstatat", []uint64{1, 1, 0x2000, unix.AT_EMPTY_PATH}, 0, map[int][]byte{1: cs("")}, map[int][]byte{2: statBuf(0o20666, 0, unix.Mkdev(1, 3))}),
			`newfstatat(1, "", {st_mode=S_IFCHR|0666, st_rdev=makedev(0x1, 0x3), ...}, AT_EMPTY_PATH) = 0`},
		{call(t, "statx", []uint64{atCWD, 1, 0, unix.STATX_ALL, 0x2000}, 0, map[int][]byte{1: cs(hostname)}, map[int][]byte{4: sx}),
			`statx(AT_FDCWD, "/etc/hostname", AT_STATX_SYNC_AS_STAT, STATX_ALL, {stx_mask=STATX_ALL|STATX_MNT_ID, stx_attributes=0, stx_mode=S_IFREG|0755, stx_size=3, ...}) = 0`},
		{call(t, "lseek", []uint64{3, uint64(^uint64(1)), unix.SEEK_END}, 1, nil, nil), `lseek(3, -2, SEEK_END) = 1`},
		{call(t, "close", []uint64{99}, -9, nil, nil), `close(99) = -1 EBADF (Bad file descriptor)`},
		{call(t, "mmap", []uint64{0, 8192, 3, unix.MAP_PRIVATE | unix.MAP_ANONYMOUS, ^uint64(0), 0}, 0x7ff47c274000, nil, nil),
			`mmap(NULL, 8192, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7ff47c274000`},
		{call(t, "mmap", []uint64{0x7ff47c0af000, 1400832, 5, unix.MAP_PRIVATE | unix.MAP_FIXED | unix.MAP_DENYWRITE, 3, 0x26000}, 0x7ff47c0af000, nil, nil),
			`mmap(0x7ff47c0af000, 1400832, PROT_READ|PROT_EXEC, MAP_PRIVATE|MAP_FIXED|MAP_DENYWRITE, 3, 0x26000) = 0x7ff47c0af000`},
		{call(t, "mprotect", []uint64{0x7ff47c272000, 4096, 0}, 0, nil, nil), `mprotect(0x7ff47c272000, 4096, PROT_NONE) = 0`},
		{call(t, "madvise", []uint64{0x7ff47c272000, 8192, unix.MADV_DONTNEED}, 0, nil, nil), `madvise(0x7ff47c272000, 8192, MADV_DONTNEED) = 0`},
		{call(t, "brk", []uint64{0}, 0x56354b13a000, nil, nil), `brk(NULL) = 0x56354b13a000`},
		{call(t, "arch_prctl", []uint64{0x1002, 0x7ff47c086740}, 0, nil, nil), `arch_prctl(ARCH_SET_FS, 0x7ff47c086740) = 0`},
		{call(t, "set_robust_list", []uint64{0x7ff47c086a20, 24}, 0, nil, nil), `set_robust_list(0x7ff47c086a20, 24) = 0`},
		{call(t, "rseq", []uint64{0x7ff47c087060, 0x20, 0, 0x53053053}, 0, nil, nil), `rseq(0x7ff47c087060, 0x20, 0, 0x53053053) = 0`},
		{call(t, "prlimit64", []uint64{0, unix.RLIMIT_STACK, 0, 0x3000}, 0, nil, map[int][]byte{3: u64s(8192*1024, ^uint64(0))}),
			`prlimit64(0, RLIMIT_STACK, NULL, {rlim_cur=8192*1024, rlim_max=RLIM64_INFINITY}) = 0`},
		{call(t, "rt_sigaction", []uint64{2, 0x1000, 0, 8}, 0, map[int][]byte{1: sig}, nil),
			`rt_sigaction(SIGINT, {sa_handler=SIG_IGN, sa_mask=[], sa_flags=SA_RESTORER|SA_RESTART, sa_restorer=0x7ff47c0c5050}, NULL, 8) = 0`},
		{call(t, "rt_sigaction", []uint64{33, 0x1000, 0, 8}, 0, map[int][]byte{1: sigRT}, nil),
			`rt_sigaction(SIGRT_1, {sa_handler=0x7f9de514f720, sa_mask=[], sa_flags=SA_RESTORER|SA_ONSTACK|SA_RESTART|SA_SIGINFO, sa_restorer=0x7f9de5105050}, NULL, 8) = 0`},
		{call(t, "rt_sigprocmask", []uint64{unix.SIG_BLOCK, 0x1000, 0, 8}, 0, map[int][]byte{1: u64s(1<<1 | 1<<14)}, nil),
			`rt_sigprocmask(SIG_BLOCK, [INT TERM], NULL, 8) = 0`},
		{call(t, "rt_sigprocmask", []uint64{unix.SIG_SETMASK, 0x1000, 0x2000, 8}, 0, map[int][]byte{1: u64s(^uint64(3 << 31))}, map[int][]byte{2: u64s(1<<1 | 1<<14)}),
			`rt_sigprocmask(SIG_SETMASK, ~[RTMIN RT_1], [INT TERM], 8) = 0`},
		{call(t, "rt_sigprocmask", []uint64{unix.SIG_BLOCK, 0x1000, 0x2000, 8}, 0, map[int][]byte{1: u64s(^uint64(0))}, map[int][]byte{2: u64s(0)}),
			`rt_sigprocmask(SIG_BLOCK, ~[], [], 8) = 0`},
		{call(t, "pipe2", []uint64{0x1000, unix.O_CLOEXEC | unix.O_NONBLOCK}, 0, nil, map[int][]byte{0: u32s(3, 5)}),
			`pipe2([3, 5], O_NONBLOCK|O_CLOEXEC) = 0`},
		{call(t, "dup3", []uint64{6, 20, unix.O_CLOEXEC}, 20, nil, nil), `dup3(6, 20, O_CLOEXEC) = 20`},
		{call(t, "fcntl", []uint64{6, unix.F_GETFL}, 0, nil, nil), `fcntl(6, F_GETFL) = 0 (flags O_RDONLY)`},
		{call(t, "fcntl", []uint64{6, unix.F_SETFD, unix.FD_CLOEXEC}, 0, nil, nil), `fcntl(6, F_SETFD, FD_CLOEXEC) = 0`},
		{call(t, "fcntl", []uint64{6, unix.F_SETFL, unix.O_RDWR | unix.O_NONBLOCK}, 0, nil, nil), `fcntl(6, F_SETFL, O_RDWR|O_NONBLOCK) = 0`},
		{call(t, "fcntl", []uint64{6, unix.F_GETFD}, 1, nil, nil), `fcntl(6, F_GETFD) = 0x1 (flags FD_CLOEXEC)`},
		{call(t, "fcntl", []uint64{6, unix.F_DUPFD_CLOEXEC, 30}, 30, nil, nil), `fcntl(6, F_DUPFD_CLOEXEC, 30) = 30`},
		{call(t, "ioctl", []uint64{1, unix.TIOCGWINSZ, 0x7ffdb5e15140}, -25, nil, nil),
			`ioctl(1, TIOCGWINSZ, 0x7ffdb5e15140) = -1 ENOTTY (Inappropriate ioctl for device)`},
		{call(t, "ioctl", []uint64{6, 0x5421, 0x1000}, 0, map[int][]byte{2: u32s(1)}, nil), `ioctl(6, FIONBIO, [1]) = 0`},
		{call(t, "socket", []uint64{unix.AF_UNIX, unix.SOCK_STREAM | unix.SOCK_CLOEXEC, 0}, 9, nil, nil), `socket(AF_UNIX, SOCK_STREAM|SOCK_CLOEXEC, 0) = 9`},
		{call(t, "socket", []uint64{unix.AF_INET, unix.SOCK_DGRAM, unix.IPPROTO_UDP}, 11, nil, nil), `socket(AF_INET, SOCK_DGRAM, IPPROTO_UDP) = 11`},
		{call(t, "socket", []uint64{unix.AF_INET6, unix.SOCK_STREAM, 0}, 12, nil, nil), `socket(AF_INET6, SOCK_STREAM, IPPROTO_IP) = 12`},
		{call(t, "connect", []uint64{9, 0x1000, 110}, -2, map[int][]byte{1: sun}, nil),
			`connect(9, {sa_family=AF_UNIX, sun_path="/tmp/nonexist.sock"}, 110) = -1 ENOENT (No such file or directory)`},
		{call(t, "connect", []uint64{11, 0x1000, 16}, 0, map[int][]byte{1: in4}, nil),
			`connect(11, {sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr("127.0.0.1")}, 16) = 0`},
		{call(t, "connect", []uint64{12, 0x1000, 28}, -111, map[int][]byte{1: in6}, nil),
			`connect(12, {sa_family=AF_INET6, sin6_port=htons(80), sin6_flowinfo=htonl(0), inet_pton(AF_INET6, "::1", &sin6_addr), sin6_scope_id=0}, 28) = -1 ECONNREFUSED (Connection refused)`},
		{call(t, "bind", []uint64{7, 0x1000, 6}, 0, map[int][]byte{1: []byte{1, 0, 0, 'a', 'b', 's'}}, nil),
			`bind(7, {sa_family=AF_UNIX, sun_path=@"abs"}, 6) = 0`},
		{call(t, "getsockname", []uint64{5, 0x1000, 0x2000}, 0, map[int][]byte{2: u32s(110)}, map[int][]byte{1: []byte{1, 0}, 2: u32s(2)}),
			`getsockname(5, {sa_family=AF_UNIX}, [110 => 2]) = 0`},
		{call(t, "setsockopt", []uint64{7, unix.SOL_SOCKET, unix.SO_REUSEADDR, 0x1000, 4}, 0, map[int][]byte{3: u32s(1)}, nil),
			`setsockopt(7, SOL_SOCKET, SO_REUSEADDR, [1], 4) = 0`},
		{call(t, "getsockopt", []uint64{7, unix.SOL_SOCKET, unix.SO_TYPE, 0x1000, 0x2000}, 0, nil, map[int][]byte{3: u32s(1), 4: u32s(4)}),
			`getsockopt(7, SOL_SOCKET, SO_TYPE, [1], [4]) = 0`},
		{call(t, "uname", []uint64{0x1000}, 0, nil, map[int][]byte{0: un}), `uname({sysname="Linux", nodename="vm", ...}) = 0`},
		{call(t, "sysinfo", []uint64{0x1000}, 0, nil, map[int][]byte{0: sysinfo}),
			`sysinfo({uptime=9955, loads=[1760, 29632, 45664], totalram=25276510208, freeram=24829968384, sharedram=9068544, bufferram=4829184, totalswap=0, freeswap=0, procs=84, totalhigh=0, freehigh=0, mem_unit=1}) = 0`},
		{call(t, "poll", []uint64{0x1000, 2, 0}, 1, map[int][]byte{0: u32s(6, 1, 1, 4)}, map[int][]byte{0: u32s(6, 1, 1, 4|4<<16)}),
			`poll([{fd=6, events=POLLIN}, {fd=1, events=POLLOUT}], 2, 0) = 1 ([{fd=1, revents=POLLOUT}])`},
		{call(t, "pselect6", []uint64{7, 0x1000, 0, 0, 0x2000, 0}, 1, map[int][]byte{1: u64s(1 | 1<<6), 4: u64s(0, 0)}, map[int][]byte{1: u64s(1), 4: u64s(0, 0)}),
			`pselect6(7, [0 6], NULL, NULL, {tv_sec=0, tv_nsec=0}, NULL) = 1 (in [0], left {tv_sec=0, tv_nsec=0})`},
		{call(t, "pselect6", []uint64{4, 0x1000, 0, 0, 0x2000, 0}, 0, map[int][]byte{1: u64s(1 << 3), 4: u64s(1, 0)}, nil),
			`pselect6(4, [3], NULL, NULL, {tv_sec=1, tv_nsec=0}, NULL) = 0 (Timeout)`},
		{call(t, "epoll_create1", []uint64{unix.EPOLL_CLOEXEC}, 13, nil, nil), `epoll_create1(EPOLL_CLOEXEC) = 13`},
		{call(t, "epoll_ctl", []uint64{13, unix.EPOLL_CTL_ADD, 6, 0x1000}, 0, map[int][]byte{3: append(u32s(unix.EPOLLIN), u64s(6)...)}, nil),
			`epoll_ctl(13, EPOLL_CTL_ADD, 6, {events=EPOLLIN, data={u32=6, u64=6}}) = 0`},
		{call(t, "getrandom", []uint64{0x1000, 8, unix.GRND_NONBLOCK}, 8, nil, map[int][]byte{0: []byte("\x24\xa2\x5b\xe4\x91\xc1\x21\x0b")}),
			`getrandom("\x24\xa2\x5b\xe4\x91\xc1\x21\x0b", 8, GRND_NONBLOCK) = 8`},
		{call(t, "eventfd2", []uint64{0, unix.EFD_CLOEXEC | unix.EFD_NONBLOCK}, 14, nil, nil), `eventfd2(0, EFD_CLOEXEC|EFD_NONBLOCK) = 14`},
		{call(t, "prctl", []uint64{unix.PR_SET_NAME, 0x1000}, 0, map[int][]byte{1: cs("foo")}, nil), `prctl(PR_SET_NAME, "foo") = 0`},
		{call(t, "prctl", []uint64{unix.PR_GET_DUMPABLE}, 1, nil, nil), `prctl(PR_GET_DUMPABLE) = 1 (SUID_DUMP_USER)`},
		{call(t, "clock_nanosleep", []uint64{unix.CLOCK_REALTIME, 0, 0x1000, 0}, 0, map[int][]byte{2: u64s(0, 1000000)}, nil),
			`clock_nanosleep(CLOCK_REALTIME, 0, {tv_sec=0, tv_nsec=1000000}, NULL) = 0`},
		{call(t, "writev", []uint64{1, 0x1000, 2}, 6, map[int][]byte{1: iov}, nil),
			`writev(1, [{iov_base="ab", iov_len=2}, {iov_base="cde\n", iov_len=4}], 2) = 6`},
		{call(t, "readv", []uint64{3, 0x1000, 2}, 7, nil, map[int][]byte{1: riov}),
			`readv(3, [{iov_base="abc", iov_len=3}, {iov_base="defg", iov_len=10}], 2) = 7`},
		{call(t, "futex", []uint64{0x7ffdb5e14d5c, 1 | 128, 1}, 0, nil, nil), `futex(0x7ffdb5e14d5c, FUTEX_WAKE_PRIVATE, 1) = 0`},
		{call(t, "futex", []uint64{0x7f9de50c5990, 9 | 256, 20726, 0, 0, 0xffffffff}, 0, nil, nil),
			`futex(0x7f9de50c5990, FUTEX_WAIT_BITSET|FUTEX_CLOCK_REALTIME, 20726, NULL, FUTEX_BITSET_MATCH_ANY) = 0`},
		{call(t, "umask", []uint64{0o22}, 0o22, nil, nil), `umask(022) = 022`},
		{call(t, "mkdir", []uint64{1, 0o755}, 0, map[int][]byte{0: cs("/tmp/st/d")}, nil), `mkdir("/tmp/st/d", 0755) = 0`},
		{call(t, "unlinkat", []uint64{atCWD, 1, unix.AT_REMOVEDIR}, 0, map[int][]byte{1: cs("/tmp/st/d")}, nil),
			`unlinkat(AT_FDCWD, "/tmp/st/d", AT_REMOVEDIR) = 0`},
		{call(t, "getdents64", []uint64{15, 0x7ffdb5e13d50, 4096}, 128, nil, map[int][]byte{1: dents}),
			`getdents64(15, 0x7ffdb5e13d50 /* 5 entries */, 4096) = 128`},
		{&Call{Nr: 0x1d6, Args: [6]uint64{1, 2, 3, 4, 5, 6}, Ret: -38, Returned: true},
			`syscall_0x1d6(0x1, 0x2, 0x3, 0x4, 0x5, 0x6) = -1 ENOSYS (Function not implemented)`},
		{call(t, "getcwd", []uint64{0x1000, 100}, 5, nil, map[int][]byte{0: cs("/tmp")}), `getcwd("/tmp", 100) = 5`},
		{call(t, "clone", []uint64{unix.CLONE_CHILD_CLEARTID | unix.CLONE_CHILD_SETTID | uint64(unix.SIGCHLD), 0, 0, 0x7ff47c086a10}, 15466, nil, nil),
			`clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7ff47c086a10) = 15466`},
		{call(t, "wait4", []uint64{15466, 0x1000, 0, 0}, 15466, nil, map[int][]byte{1: u32s(3 << 8)}),
			`wait4(15466, [{WIFEXITED(s) && WEXITSTATUS(s) == 3}], 0, NULL) = 15466`},
		{call(t, "wait4", []uint64{15467, 0x1000, 0, 0}, 15467, nil, map[int][]byte{1: u32s(15)}),
			`wait4(15467, [{WIFSIGNALED(s) && WTERMSIG(s) == SIGTERM}], 0, NULL) = 15467`},
		{call(t, "wait4", []uint64{^uint64(0), 0x7ffc5b7eab7c, unix.WNOHANG, 0}, -10, nil, nil),
			`wait4(-1, 0x7ffc5b7eab7c, WNOHANG, NULL) = -1 ECHILD (No child processes)`},
		{call(t, "kill", []uint64{15467, 15}, 0, nil, nil), `kill(15467, SIGTERM) = 0`},
		{call(t, "exit_group", []uint64{0}, 0, nil, nil), `exit_group(0) = 0`},
		{call(t, "execve", []uint64{1, 2, 0x7fff1568bd50}, 0, map[int][]byte{0: cs("./t"), 1: []byte("./t\x00\x00"), 2: make([]byte, 36)}, nil),
			`execve("./t", ["./t"], 0x7fff1568bd50 /* 35 vars */) = 0`},
		{call(t, "clone3", []uint64{0x1000, 88}, 20726, map[int][]byte{0: clone3}, map[int][]byte{0: u32s(20726)}),
			`clone3({flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM|CLONE_SETTLS|CLONE_PARENT_SETTID|CLONE_CHILD_CLEARTID, child_tid=0x7f9de50c5990, parent_tid=0x7f9de50c5990, exit_signal=0, stack=0x7f9de48c5000, stack_size=0x7fff80, tls=0x7f9de50c56c0} => {parent_tid=[20726]}, 88) = 20726`},
		// The pointer unread: its address, as strace shows it.
		{call(t, "clone3", []uint64{0x1000, 88}, 20726, map[int][]byte{0: clone3}, nil),
			`clone3({flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM|CLONE_SETTLS|CLONE_PARENT_SETTID|CLONE_CHILD_CLEARTID, child_tid=0x7f9de50c5990, parent_tid=0x7f9de50c5990, exit_signal=0, stack=0x7f9de48c5000, stack_size=0x7fff80, tls=0x7f9de50c56c0} => {parent_tid=0x7f9de50c5990}, 88) = 20726`},
	}
	for _, tt := range tests {
		if got := Line(tt.c, nil); got != tt.want {
			t.Errorf("\n got %s\nwant %s", got, tt.want)
		}
	}
}
