//go:build linux && amd64

package syscalls

import "golang.org/x/sys/unix"

// More flag and enum tables, in strace 6.1's order (src/xlat/*.in).

var faccessatFlags = xlat{
	{unix.AT_SYMLINK_NOFOLLOW, "AT_SYMLINK_NOFOLLOW"}, {unix.AT_EACCESS, "AT_EACCESS"},
	{unix.AT_EMPTY_PATH, "AT_EMPTY_PATH"},
}

var inotifyInitFlags = xlat{{unix.IN_NONBLOCK, "IN_NONBLOCK"}, {unix.IN_CLOEXEC, "IN_CLOEXEC"}}

var inotifyMask = xlat{
	{0x1, "IN_ACCESS"}, {0x2, "IN_MODIFY"}, {0x4, "IN_ATTRIB"}, {0x8, "IN_CLOSE_WRITE"},
	{0x10, "IN_CLOSE_NOWRITE"}, {0x20, "IN_OPEN"}, {0x40, "IN_MOVED_FROM"}, {0x80, "IN_MOVED_TO"},
	{0x100, "IN_CREATE"}, {0x200, "IN_DELETE"}, {0x400, "IN_DELETE_SELF"}, {0x800, "IN_MOVE_SELF"},
	{0x2000, "IN_UNMOUNT"}, {0x4000, "IN_Q_OVERFLOW"}, {0x8000, "IN_IGNORED"},
	{0x01000000, "IN_ONLYDIR"}, {0x02000000, "IN_DONT_FOLLOW"}, {0x04000000, "IN_EXCL_UNLINK"},
	{0x10000000, "IN_MASK_CREATE"}, {0x20000000, "IN_MASK_ADD"}, {0x40000000, "IN_ISDIR"},
	{0x80000000, "IN_ONESHOT"},
}

const (
	mremapMaymove   = 1
	mremapFixed     = 2
	mremapDontunmap = 4
)

var mremapFlags = xlat{{mremapMaymove, "MREMAP_MAYMOVE"}, {mremapFixed, "MREMAP_FIXED"}, {mremapDontunmap, "MREMAP_DONTUNMAP"}}

var rwfFlags = xlat{{0x1, "RWF_HIPRI"}, {0x2, "RWF_DSYNC"}, {0x4, "RWF_SYNC"}, {0x8, "RWF_NOWAIT"}, {0x10, "RWF_APPEND"}}

var membarrierCmds = xlat{
	{0, "MEMBARRIER_CMD_QUERY"}, {1 << 0, "MEMBARRIER_CMD_GLOBAL"},
	{1 << 1, "MEMBARRIER_CMD_GLOBAL_EXPEDITED"}, {1 << 2, "MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED"},
	{1 << 3, "MEMBARRIER_CMD_PRIVATE_EXPEDITED"}, {1 << 4, "MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED"},
	{1 << 5, "MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE"},
	{1 << 6, "MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE"},
	{1 << 7, "MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ"},
	{1 << 8, "MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ"},
}

const membarrierFlagCPU = 1

var membarrierFlags = xlat{{membarrierFlagCPU, "MEMBARRIER_CMD_FLAG_CPU"}}

var flockOps = xlat{
	{unix.LOCK_SH, "LOCK_SH"}, {unix.LOCK_EX, "LOCK_EX"}, {unix.LOCK_NB, "LOCK_NB"}, {unix.LOCK_UN, "LOCK_UN"},
	{32, "LOCK_MAND"}, {192, "LOCK_RW"}, {64, "LOCK_READ"}, {128, "LOCK_WRITE"},
}

var fallocFlags = xlat{
	{unix.FALLOC_FL_KEEP_SIZE, "FALLOC_FL_KEEP_SIZE"}, {unix.FALLOC_FL_PUNCH_HOLE, "FALLOC_FL_PUNCH_HOLE"},
	{unix.FALLOC_FL_NO_HIDE_STALE, "FALLOC_FL_NO_HIDE_STALE"}, {unix.FALLOC_FL_COLLAPSE_RANGE, "FALLOC_FL_COLLAPSE_RANGE"},
	{unix.FALLOC_FL_ZERO_RANGE, "FALLOC_FL_ZERO_RANGE"}, {unix.FALLOC_FL_INSERT_RANGE, "FALLOC_FL_INSERT_RANGE"},
	{unix.FALLOC_FL_UNSHARE_RANGE, "FALLOC_FL_UNSHARE_RANGE"},
}

var fSeals = xlat{
	{unix.F_SEAL_SEAL, "F_SEAL_SEAL"}, {unix.F_SEAL_SHRINK, "F_SEAL_SHRINK"}, {unix.F_SEAL_GROW, "F_SEAL_GROW"},
	{unix.F_SEAL_WRITE, "F_SEAL_WRITE"}, {unix.F_SEAL_FUTURE_WRITE, "F_SEAL_FUTURE_WRITE"},
}

var memfdFlags = xlat{{unix.MFD_CLOEXEC, "MFD_CLOEXEC"}, {unix.MFD_ALLOW_SEALING, "MFD_ALLOW_SEALING"}, {unix.MFD_HUGETLB, "MFD_HUGETLB"}}

var msyncFlags = xlat{{unix.MS_SYNC, "MS_SYNC"}, {unix.MS_ASYNC, "MS_ASYNC"}, {unix.MS_INVALIDATE, "MS_INVALIDATE"}}

var spliceFlags = xlat{
	{unix.SPLICE_F_MOVE, "SPLICE_F_MOVE"}, {unix.SPLICE_F_NONBLOCK, "SPLICE_F_NONBLOCK"},
	{unix.SPLICE_F_MORE, "SPLICE_F_MORE"}, {unix.SPLICE_F_GIFT, "SPLICE_F_GIFT"},
}

var shutdownHow = xlat{{unix.SHUT_RD, "SHUT_RD"}, {unix.SHUT_WR, "SHUT_WR"}, {unix.SHUT_RDWR, "SHUT_RDWR"}}

var timerfdFlags = xlat{
	{unix.TFD_TIMER_ABSTIME, "TFD_TIMER_ABSTIME"}, {unix.TFD_TIMER_CANCEL_ON_SET, "TFD_TIMER_CANCEL_ON_SET"},
	{unix.TFD_CLOEXEC, "TFD_CLOEXEC"}, {unix.TFD_NONBLOCK, "TFD_NONBLOCK"},
}

var sfdFlags = xlat{{unix.SFD_CLOEXEC, "SFD_CLOEXEC"}, {unix.SFD_NONBLOCK, "SFD_NONBLOCK"}}

// personalityTypes are matched against the low byte alone (PER_MASK),
// so only the types without flag bits can show.
var personalityTypes = xlat{
	{0, "PER_LINUX"}, {6, "PER_BSD"}, {8, "PER_LINUX32"}, {0xc, "PER_RISCOS"}, {0xf, "PER_OSF4"},
	{0x10, "PER_HPUX"}, {0xff, "PER_MASK"},
}

var personalityFlags = xlat{
	{0x0020000, "UNAME26"}, {0x0040000, "ADDR_NO_RANDOMIZE"}, {0x0080000, "FDPIC_FUNCPTRS"},
	{0x0100000, "MMAP_PAGE_ZERO"}, {0x0200000, "ADDR_COMPAT_LAYOUT"}, {0x0400000, "READ_IMPLIES_EXEC"},
	{0x0800000, "ADDR_LIMIT_32BIT"}, {0x1000000, "SHORT_INODE"}, {0x2000000, "WHOLE_SECONDS"},
	{0x4000000, "STICKY_TIMEOUTS"}, {0x8000000, "ADDR_LIMIT_3GB"},
}

// personalityStr is strace's: the type of the low byte, then the flags.
func personalityStr(p uint32) string {
	s := personalityTypes.enum(uint64(p&0xff), true)
	if rest := p &^ 0xff; rest != 0 {
		s += "|" + personalityFlags.flags(uint64(rest))
	}
	return s
}

var itimerWhich = xlat{{0, "ITIMER_REAL"}, {1, "ITIMER_VIRTUAL"}, {2, "ITIMER_PROF"}}

var waitidTypes = xlat{{0, "P_ALL"}, {1, "P_PID"}, {2, "P_PGID"}, {3, "P_PIDFD"}}

// rusageWho holds the values as 32-bit: RUSAGE_CHILDREN is -1.
var rusageWho = xlat{{0, "RUSAGE_SELF"}, {0xffffffff, "RUSAGE_CHILDREN"}, {0xfffffffe, "RUSAGE_BOTH"}, {1, "RUSAGE_THREAD"}}

var ssFlags = xlat{{1, "SS_ONSTACK"}, {2, "SS_DISABLE"}, {1 << 31, "SS_AUTODISARM"}}

var resolveFlags = xlat{
	{unix.RESOLVE_NO_XDEV, "RESOLVE_NO_XDEV"}, {unix.RESOLVE_NO_MAGICLINKS, "RESOLVE_NO_MAGICLINKS"},
	{unix.RESOLVE_NO_SYMLINKS, "RESOLVE_NO_SYMLINKS"}, {unix.RESOLVE_BENEATH, "RESOLVE_BENEATH"},
	{unix.RESOLVE_IN_ROOT, "RESOLVE_IN_ROOT"}, {0x20, "RESOLVE_CACHED"},
}

var tcpOpts = xlat{
	{1, "TCP_NODELAY"}, {2, "TCP_MAXSEG"}, {3, "TCP_CORK"}, {4, "TCP_KEEPIDLE"}, {5, "TCP_KEEPINTVL"},
	{6, "TCP_KEEPCNT"}, {7, "TCP_SYNCNT"}, {8, "TCP_LINGER2"}, {9, "TCP_DEFER_ACCEPT"},
	{10, "TCP_WINDOW_CLAMP"}, {11, "TCP_INFO"}, {12, "TCP_QUICKACK"}, {13, "TCP_CONGESTION"},
	{14, "TCP_MD5SIG"}, {15, "TCP_COOKIE_TRANSACTIONS"}, {16, "TCP_THIN_LINEAR_TIMEOUTS"},
	{17, "TCP_THIN_DUPACK"}, {18, "TCP_USER_TIMEOUT"}, {19, "TCP_REPAIR"}, {20, "TCP_REPAIR_QUEUE"},
	{21, "TCP_QUEUE_SEQ"}, {22, "TCP_REPAIR_OPTIONS"}, {23, "TCP_FASTOPEN"}, {24, "TCP_TIMESTAMP"},
	{25, "TCP_NOTSENT_LOWAT"}, {26, "TCP_CC_INFO"}, {27, "TCP_SAVE_SYN"}, {28, "TCP_SAVED_SYN"},
	{29, "TCP_REPAIR_WINDOW"}, {30, "TCP_FASTOPEN_CONNECT"}, {31, "TCP_ULP"}, {32, "TCP_MD5SIG_EXT"},
	{33, "TCP_FASTOPEN_KEY"}, {34, "TCP_FASTOPEN_NO_COOKIE"}, {35, "TCP_ZEROCOPY_RECEIVE"},
	{36, "TCP_INQ"}, {37, "TCP_TX_DELAY"},
}

// capNames are the capabilities by number (linux/capability.h).
var capNames = func() xlat {
	names := []string{"CHOWN", "DAC_OVERRIDE", "DAC_READ_SEARCH", "FOWNER", "FSETID", "KILL",
		"SETGID", "SETUID", "SETPCAP", "LINUX_IMMUTABLE", "NET_BIND_SERVICE", "NET_BROADCAST",
		"NET_ADMIN", "NET_RAW", "IPC_LOCK", "IPC_OWNER", "SYS_MODULE", "SYS_RAWIO", "SYS_CHROOT",
		"SYS_PTRACE", "SYS_PACCT", "SYS_ADMIN", "SYS_BOOT", "SYS_NICE", "SYS_RESOURCE", "SYS_TIME",
		"SYS_TTY_CONFIG", "MKNOD", "LEASE", "AUDIT_WRITE", "AUDIT_CONTROL", "SETFCAP",
		"MAC_OVERRIDE", "MAC_ADMIN", "SYSLOG", "WAKE_ALARM", "BLOCK_SUSPEND", "AUDIT_READ",
		"PERFMON", "BPF", "CHECKPOINT_RESTORE"}
	x := make(xlat, len(names))
	for i, n := range names {
		x[i] = xv{uint64(i), "CAP_" + n}
	}
	return x
}()

var capAmbientOps = xlat{{1, "PR_CAP_AMBIENT_IS_SET"}, {2, "PR_CAP_AMBIENT_RAISE"}, {3, "PR_CAP_AMBIENT_LOWER"}, {4, "PR_CAP_AMBIENT_CLEAR_ALL"}}

var statfsFlags = xlat{
	{0x0020, "ST_VALID"}, {0x0001, "ST_RDONLY"}, {0x0002, "ST_NOSUID"}, {0x0004, "ST_NODEV"},
	{0x0008, "ST_NOEXEC"}, {0x0010, "ST_SYNCHRONOUS"}, {0x0040, "ST_MANDLOCK"}, {0x0400, "ST_NOATIME"},
	{0x0800, "ST_NODIRATIME"}, {0x1000, "ST_RELATIME"}, {0x2000, "ST_NOSYMFOLLOW"},
}

// fsMagics are the common file system types of statfs's f_type
// (strace's xlat/fsmagic.in has about 120; the rest show in hex).
var fsMagics = xlat{
	{0x1cd1, "DEVPTS_SUPER_MAGIC"}, {0x6969, "NFS_SUPER_MAGIC"}, {0x9660, "ISOFS_SUPER_MAGIC"},
	{0x9fa0, "PROC_SUPER_MAGIC"}, {0x4d44, "MSDOS_SUPER_MAGIC"}, {0xef53, "EXT2_SUPER_MAGIC"},
	{0x0027e0eb, "CGROUP_SUPER_MAGIC"}, {0x01021994, "TMPFS_MAGIC"}, {0x01021997, "V9FS_MAGIC"},
	{0x02011994, "SHMFS_SUPER_MAGIC"}, {0x09041934, "ANON_INODE_FS_MAGIC"}, {0x2011bab0, "EXFAT_SUPER_MAGIC"},
	{0x50495045, "PIPEFS_MAGIC"}, {0x534f434b, "SOCKFS_MAGIC"}, {0x58465342, "XFS_SUPER_MAGIC"},
	{0x62646576, "BDEVFS_MAGIC"}, {0x62656570, "CONFIGFS_MAGIC"}, {0x62656572, "SYSFS_MAGIC"},
	{0x63677270, "CGROUP2_SUPER_MAGIC"}, {0x64626720, "DEBUGFS_MAGIC"}, {0x65735543, "FUSE_CTL_SUPER_MAGIC"},
	{0x65735546, "FUSE_SUPER_MAGIC"}, {0x6e736673, "NSFS_MAGIC"}, {0x73636673, "SECURITYFS_MAGIC"},
	{0x73717368, "SQUASHFS_MAGIC"}, {0x74726163, "TRACEFS_MAGIC"}, {0x794c7630, "OVERLAYFS_SUPER_MAGIC"},
	{0x858458f6, "RAMFS_MAGIC"}, {0x9123683e, "BTRFS_SUPER_MAGIC"}, {0x958458f6, "HUGETLBFS_MAGIC"},
	{0xcafe4a11, "BPF_FS_MAGIC"}, {0xde5e81e4, "EFIVARFS_MAGIC"}, {0xe0f5e1e2, "EROFS_SUPER_MAGIC_V1"},
	{0xf2f52010, "F2FS_SUPER_MAGIC"}, {0xf97cff8c, "SELINUX_MAGIC"}, {0x5346544e, "NTFS_SB_MAGIC"},
	{0x2fc12fc1, "ZFS_SUPER_MAGIC"}, {0x00c36400, "CEPH_SUPER_MAGIC"}, {0x517b, "SMB_SUPER_MAGIC"},
	{0x5345434d, "SECRETMEM_MAGIC"}, {0x444d4142, "DMA_BUF_MAGIC"}, {0x42494e4d, "BINFMTFS_MAGIC"},
	{0x6c6f6f70, "BINDERFS_SUPER_MAGIC"}, {0x6165676c, "PSTOREFS_MAGIC"}, {0x15013346, "UDF_SUPER_MAGIC"},
}
