//go:build linux && amd64

package syscalls

import (
	"encoding/binary"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The expected lines were printed by strace 6.1 on this machine for C
// programs making the same calls (addresses and pids aside).
func TestLineMatchesStraceMore(t *testing.T) {
	localZone = time.UTC
	defer func() { localZone = time.Local }()
	iov := append(append(u64s(0x1000, 2, 2), "ab"...), append(u64s(0x2000, 2, 2), "cd"...)...)
	riov := append(u64s(0x1000, 4, 4), "abcd"...)
	statfs := u64s(0xef53, 4096, 66053021, 62798291, 20620586, 16777216, 16351461, 0xf60e2128_5f07af02, 255, 4096, 0x1020, 0, 0, 0, 0)
	si := make([]byte, sizeSiginfo)
	copy(si, u32s(17, 0, 1, 0, 24845, 0, 5, 0))
	copy(si[32:], u64s(140297045897536, 4294967295))
	ru := make([]byte, sizeRusage)
	copy(ru, u64s(0, 0, 0, 6963))
	sev := append(u64s(7), u32s(14, 0, 0, 0, 0, 0)...)
	sevTid := append(u64s(0), u32s(14, 4, 2138, 0, 0, 0)...)
	pages := make([]byte, 33)
	for i := range pages {
		pages[i] = 1
	}
	var mask uint64 = 1<<(unix.SIGUSR1-1) | 1<<(unix.SIGCHLD-1)

	tests := []struct {
		c    *Call
		want string
	}{
		// Found by the corpus's cp (2026-11-25): strace's flag order and
		// its name for FICLONE, whose argument is a file descriptor.
		{call(t, "openat", []uint64{uint64(0xffffffffffffff9c), 0x1000, unix.O_PATH | unix.O_DIRECTORY}, -2, map[int][]byte{1: []byte("/dev/null\x00")}, nil),
			`openat(AT_FDCWD, "/dev/null", O_RDONLY|O_PATH|O_DIRECTORY) = -1 ENOENT (No such file or directory)`},
		{call(t, "ioctl", []uint64{4, unix.FICLONE, 3}, -18, nil, nil),
			`ioctl(4, BTRFS_IOC_CLONE or FICLONE, 3) = -1 EXDEV (Invalid cross-device link)`},
		// Item 1: values strace does not show, or shows otherwise.
		{call(t, "wait4", []uint64{24693, 0x7ffdb45a72c8, unix.WNOHANG, 0x7ffdb45a7230}, 0, nil, map[int][]byte{1: u32s(0), 3: ru}),
			`wait4(24693, 0x7ffdb45a72c8, WNOHANG, 0x7ffdb45a7230) = 0`},
		{call(t, "wait4", []uint64{24693, 0x1000, 0, 0x2000}, 24693, nil, map[int][]byte{1: u32s(3 << 8), 3: ru}),
			`wait4(24693, [{WIFEXITED(s) && WEXITSTATUS(s) == 3}], 0, {ru_utime={tv_sec=0, tv_usec=0}, ru_stime={tv_sec=0, tv_usec=6963}, ...}) = 24693`},
		{call(t, "pwritev", []uint64{5, 0x1000, 2, 0, 0}, 4, map[int][]byte{1: iov}, nil),
			`pwritev(5, [{iov_base="ab", iov_len=2}, {iov_base="cd", iov_len=2}], 2, 0) = 4`},
		{call(t, "pwritev2", []uint64{5, 0x1000, 2, 0, 0, 2}, 4, map[int][]byte{1: iov}, nil),
			`pwritev2(5, [{iov_base="ab", iov_len=2}, {iov_base="cd", iov_len=2}], 2, 0, RWF_DSYNC) = 4`},
		{call(t, "preadv", []uint64{5, 0x1000, 1, 0, 0}, 4, nil, map[int][]byte{1: riov}),
			`preadv(5, [{iov_base="abcd", iov_len=4}], 1, 0) = 4`},
		{call(t, "preadv2", []uint64{5, 0x1000, 1, 0, 0, 0}, 4, nil, map[int][]byte{1: riov}),
			`preadv2(5, [{iov_base="abcd", iov_len=4}], 1, 0, 0) = 4`},
		{call(t, "mremap", []uint64{0x7f9973955000, 8192, 16384, 1, 0}, 0x7f9973951000, nil, nil),
			`mremap(0x7f9973955000, 8192, 16384, MREMAP_MAYMOVE) = 0x7f9973951000`},
		{call(t, "mremap", []uint64{0x7f9973951000, 16384, 16384, 3, 0x7f9973759000}, 0x7f9973759000, nil, nil),
			`mremap(0x7f9973951000, 16384, 16384, MREMAP_MAYMOVE|MREMAP_FIXED, 0x7f9973759000) = 0x7f9973759000`},
		{call(t, "mremap", []uint64{0x7f9973759000, 16384, 4096, 0, 0x1234}, 0x7f9973759000, nil, nil),
			`mremap(0x7f9973759000, 16384, 4096, 0) = 0x7f9973759000`},
		{call(t, "membarrier", []uint64{0, 0, 0}, 0x3ff, nil, nil),
			`membarrier(MEMBARRIER_CMD_QUERY, 0) = 0x3ff (MEMBARRIER_CMD_GLOBAL|MEMBARRIER_CMD_GLOBAL_EXPEDITED|MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED|MEMBARRIER_CMD_PRIVATE_EXPEDITED|MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED|MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE|MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE|MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ|MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ|0x200)`},
		{call(t, "membarrier", []uint64{8, 0, 0}, -1, nil, nil),
			`membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0) = -1 EPERM (Operation not permitted)`},
		{call(t, "membarrier", []uint64{128, 1, 1}, -1, nil, nil),
			`membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ, MEMBARRIER_CMD_FLAG_CPU, 1) = -1 EPERM (Operation not permitted)`},
		{call(t, "faccessat2", []uint64{atCWD, 1, unix.R_OK, unix.AT_EACCESS}, 0, map[int][]byte{1: cs("/etc/passwd")}, nil),
			`faccessat2(AT_FDCWD, "/etc/passwd", R_OK, AT_EACCESS) = 0`},
		{call(t, "faccessat2", []uint64{atCWD, 1, unix.R_OK, unix.AT_EACCESS | unix.AT_SYMLINK_NOFOLLOW}, 0, map[int][]byte{1: cs("/etc/passwd")}, nil),
			`faccessat2(AT_FDCWD, "/etc/passwd", R_OK, AT_SYMLINK_NOFOLLOW|AT_EACCESS) = 0`},
		{call(t, "inotify_init1", []uint64{unix.IN_CLOEXEC | unix.IN_NONBLOCK}, 6, nil, nil), `inotify_init1(IN_NONBLOCK|IN_CLOEXEC) = 6`},
		{call(t, "pause", nil, -514, nil, nil), `pause() = ? ERESTARTNOHAND (To be restarted if no handler)`},
		{call(t, "read", []uint64{3, 0x7ffdb45a710f, 1}, -512, nil, nil),
			`read(3, 0x7ffdb45a710f, 1) = ? ERESTARTSYS (To be restarted if SA_RESTART is set)`},
		{call(t, "clock_nanosleep", []uint64{unix.CLOCK_REALTIME, 0, 0x1000, 0}, -516, map[int][]byte{2: u64s(5, 0)}, nil),
			`clock_nanosleep(CLOCK_REALTIME, 0, {tv_sec=5, tv_nsec=0}, NULL) = ? ERESTART_RESTARTBLOCK (Interrupted by signal)`},
		// Item 2: structs.
		{call(t, "statfs", []uint64{1, 0x1000}, 0, map[int][]byte{0: cs("/tmp")}, map[int][]byte{1: statfs}),
			`statfs("/tmp", {f_type=EXT2_SUPER_MAGIC, f_bsize=4096, f_blocks=66053021, f_bfree=62798291, f_bavail=20620586, f_files=16777216, f_ffree=16351461, f_fsid={val=[0x5f07af02, 0xf60e2128]}, f_namelen=255, f_frsize=4096, f_flags=ST_VALID|ST_RELATIME}) = 0`},
		{call(t, "fstatfs", []uint64{5, 0x1000}, -9, nil, nil), `fstatfs(5, 0x1000) = -1 EBADF (Bad file descriptor)`},
		{call(t, "utimensat", []uint64{atCWD, 1, 0x1000, 0}, 0, map[int][]byte{1: cs("/tmp/dec/f"), 2: u64s(1, 2, 0, utimeNow)}, nil),
			`utimensat(AT_FDCWD, "/tmp/dec/f", [{tv_sec=1, tv_nsec=2} /* 1970-01-01T00:00:01.000000002+0000 */, UTIME_NOW], 0) = 0`},
		{call(t, "utimensat", []uint64{atCWD, 1, 0x1000, unix.AT_SYMLINK_NOFOLLOW}, 0, map[int][]byte{1: cs("/tmp/dec/f"), 2: u64s(1700000000, 5, 0, utimeOmit)}, nil),
			`utimensat(AT_FDCWD, "/tmp/dec/f", [{tv_sec=1700000000, tv_nsec=5} /* 2023-11-14T22:13:20.000000005+0000 */, UTIME_OMIT], AT_SYMLINK_NOFOLLOW) = 0`},
		{call(t, "utimensat", []uint64{atCWD, 1, 0, 0}, 0, map[int][]byte{1: cs("/tmp/dec/f")}, nil),
			`utimensat(AT_FDCWD, "/tmp/dec/f", NULL, 0) = 0`},
		{call(t, "setitimer", []uint64{0, 0x1000, 0x2000}, 0, map[int][]byte{1: u64s(0, 0, 0, 100000)}, map[int][]byte{2: u64s(0, 0, 0, 0)}),
			`setitimer(ITIMER_REAL, {it_interval={tv_sec=0, tv_usec=0}, it_value={tv_sec=0, tv_usec=100000}}, {it_interval={tv_sec=0, tv_usec=0}, it_value={tv_sec=0, tv_usec=0}}) = 0`},
		{call(t, "getitimer", []uint64{0, 0x1000}, 0, nil, map[int][]byte{1: u64s(0, 0, 0, 99803)}),
			`getitimer(ITIMER_REAL, {it_interval={tv_sec=0, tv_usec=0}, it_value={tv_sec=0, tv_usec=99803}}) = 0`},
		{call(t, "timerfd_create", []uint64{unix.CLOCK_MONOTONIC, unix.TFD_CLOEXEC | unix.TFD_NONBLOCK}, 7, nil, nil),
			`timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC|TFD_NONBLOCK) = 7`},
		{call(t, "timerfd_settime", []uint64{7, 0, 0x1000, 0x2000}, 0, map[int][]byte{2: u64s(1, 0, 2, 500)}, map[int][]byte{3: u64s(0, 0, 0, 0)}),
			`timerfd_settime(7, 0, {it_interval={tv_sec=1, tv_nsec=0}, it_value={tv_sec=2, tv_nsec=500}}, {it_interval={tv_sec=0, tv_nsec=0}, it_value={tv_sec=0, tv_nsec=0}}) = 0`},
		{call(t, "timerfd_gettime", []uint64{7, 0x1000}, 0, nil, map[int][]byte{1: u64s(1, 0, 1, 999941761)}),
			`timerfd_gettime(7, {it_interval={tv_sec=1, tv_nsec=0}, it_value={tv_sec=1, tv_nsec=999941761}}) = 0`},
		{call(t, "timer_create", []uint64{unix.CLOCK_MONOTONIC, 0x1000, 0x2000}, 0, map[int][]byte{1: append(u64s(0), u32s(0, 1, 0, 0, 0, 0)...)}, map[int][]byte{2: u32s(0)}),
			`timer_create(CLOCK_MONOTONIC, {sigev_signo=0, sigev_notify=SIGEV_NONE}, [0]) = 0`},
		{call(t, "timer_create", []uint64{unix.CLOCK_REALTIME, 0x1000, 0x2000}, 0, map[int][]byte{1: sev}, map[int][]byte{2: u32s(0)}),
			`timer_create(CLOCK_REALTIME, {sigev_value={sival_int=7, sival_ptr=0x7}, sigev_signo=SIGALRM, sigev_notify=SIGEV_SIGNAL}, [0]) = 0`},
		{call(t, "timer_create", []uint64{unix.CLOCK_MONOTONIC, 0x1000, 0x2000}, 0, map[int][]byte{1: sevTid}, map[int][]byte{2: u32s(1)}),
			`timer_create(CLOCK_MONOTONIC, {sigev_signo=SIGALRM, sigev_notify=SIGEV_THREAD_ID, sigev_notify_thread_id=2138}, [1]) = 0`},
		{call(t, "timer_settime", []uint64{0, 0, 0x1000, 0x2000}, 0, map[int][]byte{2: u64s(1, 0, 2, 500)}, map[int][]byte{3: u64s(0, 0, 0, 0)}),
			`timer_settime(0, 0, {it_interval={tv_sec=1, tv_nsec=0}, it_value={tv_sec=2, tv_nsec=500}}, {it_interval={tv_sec=0, tv_nsec=0}, it_value={tv_sec=0, tv_nsec=0}}) = 0`},
		{call(t, "getrusage", []uint64{0, 0x1000}, 0, nil, map[int][]byte{1: ru}),
			`getrusage(RUSAGE_SELF, {ru_utime={tv_sec=0, tv_usec=0}, ru_stime={tv_sec=0, tv_usec=6963}, ...}) = 0`},
		{call(t, "waitid", []uint64{1, 24845, 0x1000, unix.WEXITED, 0}, 0, nil, map[int][]byte{2: si}),
			`waitid(P_PID, 24845, {si_signo=SIGCHLD, si_code=CLD_EXITED, si_pid=24845, si_uid=0, si_status=5, si_utime=140297045897536 /* 1402970458975.36 s */, si_stime=4294967295 /* 42949672.95 s */}, WEXITED, NULL) = 0`},
		{call(t, "waitid", []uint64{0, 0, 0x1000, unix.WEXITED | unix.WNOHANG, 0}, 0, nil, map[int][]byte{2: make([]byte, sizeSiginfo)}),
			`waitid(P_ALL, 0, {}, WNOHANG|WEXITED, NULL) = 0`},
		{call(t, "waitid", []uint64{0, 0, 0x7ffe319b6980, unix.WEXITED | unix.WNOHANG, 0}, -10, nil, nil),
			`waitid(P_ALL, 0, 0x7ffe319b6980, WNOHANG|WEXITED, NULL) = -1 ECHILD (No child processes)`},
		{call(t, "getgroups", []uint64{64, 0x1000}, 0, nil, map[int][]byte{1: {}}), `getgroups(64, []) = 0`},
		{call(t, "getgroups", []uint64{0, 0}, 0, nil, nil), `getgroups(0, NULL) = 0`},
		{call(t, "getgroups", []uint64{64, 0x1000}, 3, nil, map[int][]byte{1: u32s(0, 4, 24)}), `getgroups(64, [0, 4, 24]) = 3`},
		{call(t, "setgroups", []uint64{3, 0x1000}, 0, map[int][]byte{1: u32s(0, 4, 24)}, nil), `setgroups(3, [0, 4, 24]) = 0`},
		{call(t, "getresuid", []uint64{0x1000, 0x2000, 0x3000}, 0, nil, map[int][]byte{0: u32s(0), 1: u32s(0), 2: u32s(0)}),
			`getresuid([0], [0], [0]) = 0`},
		{call(t, "getresgid", []uint64{0x1000, 0x2000, 0x3000}, 0, nil, map[int][]byte{0: u32s(0), 1: u32s(0), 2: u32s(0)}),
			`getresgid([0], [0], [0]) = 0`},
		{call(t, "sched_getparam", []uint64{0, 0x1000}, 0, nil, map[int][]byte{1: u32s(0)}), `sched_getparam(0, [0]) = 0`},
		{call(t, "mincore", []uint64{0x7f9973954000, 12288, 0x1000}, 0, nil, map[int][]byte{2: {0, 0, 0, 0xaa}}),
			`mincore(0x7f9973954000, 12288, [0, 0, 0]) = 0`},
		{call(t, "mincore", []uint64{0x7fb0e029d000, 163840, 0x1000}, 0, nil, map[int][]byte{2: pages}),
			`mincore(0x7fb0e029d000, 163840, [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, ...]) = 0`},
		{call(t, "copy_file_range", []uint64{5, 0x1000, 8, 0x2000, 4, 0}, 4, map[int][]byte{1: u64s(0), 3: u64s(0)}, nil),
			`copy_file_range(5, [0], 8, [0], 4, 0) = 4`},
		{call(t, "copy_file_range", []uint64{5, 0, 8, 0, 4, 0}, 4, nil, nil), `copy_file_range(5, NULL, 8, NULL, 4, 0) = 4`},
		{call(t, "getpeername", []uint64{9, 0x7ffdb45a6e00, 0x2000}, -107, map[int][]byte{2: u32s(16)}, nil),
			`getpeername(9, 0x7ffdb45a6e00, [16]) = -1 ENOTCONN (Transport endpoint is not connected)`},
		{call(t, "sigaltstack", []uint64{0x1000, 0x2000}, 0, map[int][]byte{0: u64s(0x55dbefea82a0, 0, 65536)}, map[int][]byte{1: u64s(0, 2, 0)}),
			`sigaltstack({ss_sp=0x55dbefea82a0, ss_flags=0, ss_size=65536}, {ss_sp=NULL, ss_flags=SS_DISABLE, ss_size=0}) = 0`},
		{call(t, "sigaltstack", []uint64{0, 0x2000}, 0, nil, map[int][]byte{1: u64s(0x55dbefea82a0, 0, 65536)}),
			`sigaltstack(NULL, {ss_sp=0x55dbefea82a0, ss_flags=0, ss_size=65536}) = 0`},
		{call(t, "signalfd4", []uint64{^uint64(0), 0x1000, 8, unix.SFD_CLOEXEC}, 11, map[int][]byte{1: u64s(mask)}, nil),
			`signalfd4(-1, [USR1 CHLD], 8, SFD_CLOEXEC) = 11`},
		{call(t, "signalfd", []uint64{^uint64(0), 0x1000, 8}, 5, map[int][]byte{1: u64s(1 << (unix.SIGINT - 1))}, nil),
			`signalfd(-1, [INT], 8) = 5`},
		{call(t, "openat2", []uint64{atCWD, 1, 0x1000, 24}, 12, map[int][]byte{1: cs("/etc/passwd"), 2: u64s(unix.O_RDONLY|unix.O_CLOEXEC, 0, unix.RESOLVE_NO_SYMLINKS)}, nil),
			`openat2(AT_FDCWD, "/etc/passwd", {flags=O_RDONLY|O_CLOEXEC, resolve=RESOLVE_NO_SYMLINKS}, 24) = 12`},
		{call(t, "openat2", []uint64{atCWD, 1, 0x1000, 24}, 4, map[int][]byte{1: cs("/tmp/dec/h"), 2: u64s(unix.O_RDWR|unix.O_CREAT, 0o600, 0)}, nil),
			`openat2(AT_FDCWD, "/tmp/dec/h", {flags=O_RDWR|O_CREAT, mode=0600, resolve=0}, 24) = 4`},
		// Item 2: flags by name.
		{call(t, "inotify_add_watch", []uint64{6, 1, unix.IN_MODIFY | unix.IN_CREATE | unix.IN_DELETE}, 1, map[int][]byte{1: cs("/tmp/dec")}, nil),
			`inotify_add_watch(6, "/tmp/dec", IN_MODIFY|IN_CREATE|IN_DELETE) = 1`},
		{call(t, "flock", []uint64{5, unix.LOCK_EX | unix.LOCK_NB}, 0, nil, nil), `flock(5, LOCK_EX|LOCK_NB) = 0`},
		{call(t, "flock", []uint64{5, unix.LOCK_UN}, 0, nil, nil), `flock(5, LOCK_UN) = 0`},
		{call(t, "fallocate", []uint64{5, unix.FALLOC_FL_KEEP_SIZE | unix.FALLOC_FL_PUNCH_HOLE, 0, 4096}, 0, nil, nil),
			`fallocate(5, FALLOC_FL_KEEP_SIZE|FALLOC_FL_PUNCH_HOLE, 0, 4096) = 0`},
		{call(t, "memfd_create", []uint64{1, unix.MFD_CLOEXEC | unix.MFD_ALLOW_SEALING}, 13, map[int][]byte{0: cs("x")}, nil),
			`memfd_create("x", MFD_CLOEXEC|MFD_ALLOW_SEALING) = 13`},
		{call(t, "fcntl", []uint64{13, unix.F_ADD_SEALS, unix.F_SEAL_SHRINK | unix.F_SEAL_GROW}, 0, nil, nil),
			`fcntl(13, F_ADD_SEALS, F_SEAL_SHRINK|F_SEAL_GROW) = 0`},
		{call(t, "fcntl", []uint64{13, unix.F_GET_SEALS}, 6, nil, nil), `fcntl(13, F_GET_SEALS) = 0x6 (seals F_SEAL_SHRINK|F_SEAL_GROW)`},
		{call(t, "msync", []uint64{0x7f9973954000, 4096, unix.MS_ASYNC | unix.MS_INVALIDATE}, 0, nil, nil),
			`msync(0x7f9973954000, 4096, MS_ASYNC|MS_INVALIDATE) = 0`},
		{call(t, "splice", []uint64{3, 0, 15, 0, 3, unix.SPLICE_F_MOVE | unix.SPLICE_F_NONBLOCK}, 3, nil, nil),
			`splice(3, NULL, 15, NULL, 3, SPLICE_F_MOVE|SPLICE_F_NONBLOCK) = 3`},
		{call(t, "tee", []uint64{14, 17, 3, unix.SPLICE_F_NONBLOCK}, 3, nil, nil), `tee(14, 17, 3, SPLICE_F_NONBLOCK) = 3`},
		{call(t, "shutdown", []uint64{9, unix.SHUT_RDWR}, -107, nil, nil),
			`shutdown(9, SHUT_RDWR) = -1 ENOTCONN (Transport endpoint is not connected)`},
		{call(t, "setsockopt", []uint64{9, unix.SOL_TCP, unix.TCP_NODELAY, 0x1000, 4}, 0, map[int][]byte{3: u32s(1)}, nil),
			`setsockopt(9, SOL_TCP, TCP_NODELAY, [1], 4) = 0`},
		{call(t, "personality", []uint64{0xffffffff}, 0, nil, nil), `personality(0xffffffff) = 0 (PER_LINUX)`},
		{call(t, "personality", []uint64{0x40000}, 0, nil, nil), `personality(PER_LINUX|ADDR_NO_RANDOMIZE) = 0 (PER_LINUX)`},
		{call(t, "personality", []uint64{0}, 0x40000, nil, nil), `personality(PER_LINUX) = 0x40000 (PER_LINUX|ADDR_NO_RANDOMIZE)`},
		{call(t, "prctl", []uint64{unix.PR_CAPBSET_READ, 21, 0, 0, 0}, 1, nil, nil), `prctl(PR_CAPBSET_READ, CAP_SYS_ADMIN) = 1`},
		{call(t, "prctl", []uint64{unix.PR_CAPBSET_DROP, 60, 0, 0, 0}, -22, nil, nil),
			`prctl(PR_CAPBSET_DROP, 0x3c /* CAP_??? */) = -1 EINVAL (Invalid argument)`},
		{call(t, "prctl", []uint64{unix.PR_CAP_AMBIENT, 1, 12, 0, 0}, 0, nil, nil),
			`prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, CAP_NET_ADMIN, 0, 0) = 0`},
		{call(t, "prctl", []uint64{unix.PR_CAP_AMBIENT, 4, 0, 0, 0}, 0, nil, nil),
			`prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) = 0`},
	}
	for _, tt := range tests {
		if got := Line(tt.c, nil); got != tt.want {
			t.Errorf("\n got %s\nwant %s", got, tt.want)
		}
	}
}

// TestSiginfoTimes: a SIGCHLD's times, in clock ticks with seconds when
// not 0, as strace shows them.
func TestSiginfoTimes(t *testing.T) {
	si := make([]byte, sizeSiginfo)
	copy(si, u32s(17, 0, 1, 0, 15467, 0, 0, 0))
	binary.LittleEndian.PutUint64(si[32:], 123)
	if got, want := Signal(si), "--- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_EXITED, si_pid=15467, si_uid=0, si_status=0, si_utime=123 /* 1.23 s */, si_stime=0} ---"; got != want {
		t.Errorf("got %s", got)
	}
}
