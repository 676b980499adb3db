//go:build linux && amd64

package syscalls

import (
	"fmt"
	"strconv"

	"golang.org/x/sys/unix"
)

var fcntlCmds = xlat{
	{unix.F_DUPFD, "F_DUPFD"}, {unix.F_GETFD, "F_GETFD"}, {unix.F_SETFD, "F_SETFD"},
	{unix.F_GETFL, "F_GETFL"}, {unix.F_SETFL, "F_SETFL"}, {unix.F_GETLK, "F_GETLK"},
	{unix.F_SETLK, "F_SETLK"}, {unix.F_SETLKW, "F_SETLKW"}, {unix.F_SETOWN, "F_SETOWN"},
	{unix.F_GETOWN, "F_GETOWN"}, {unix.F_SETSIG, "F_SETSIG"}, {unix.F_GETSIG, "F_GETSIG"},
	{unix.F_SETOWN_EX, "F_SETOWN_EX"}, {unix.F_GETOWN_EX, "F_GETOWN_EX"},
	{unix.F_OFD_GETLK, "F_OFD_GETLK"}, {unix.F_OFD_SETLK, "F_OFD_SETLK"}, {unix.F_OFD_SETLKW, "F_OFD_SETLKW"},
	{unix.F_SETLEASE, "F_SETLEASE"}, {unix.F_GETLEASE, "F_GETLEASE"}, {unix.F_NOTIFY, "F_NOTIFY"},
	{unix.F_DUPFD_CLOEXEC, "F_DUPFD_CLOEXEC"}, {unix.F_SETPIPE_SZ, "F_SETPIPE_SZ"},
	{unix.F_GETPIPE_SZ, "F_GETPIPE_SZ"}, {unix.F_ADD_SEALS, "F_ADD_SEALS"}, {unix.F_GET_SEALS, "F_GET_SEALS"},
}

var fdFlags = xlat{{unix.FD_CLOEXEC, "FD_CLOEXEC"}}

// ioctlReqs are the requests common programs make (asm-generic/ioctls.h
// values where x/sys/unix lacks them); others are shown as strace does
// for unknown ones (_IOC(...) or hex).
var ioctlReqs = xlat{
	{unix.TCGETS, "TCGETS"}, {unix.TCSETS, "SNDCTL_TMR_START or TCSETS"},
	{unix.TCSETSW, "SNDCTL_TMR_STOP or TCSETSW"}, {unix.TCSETSF, "SNDCTL_TMR_CONTINUE or TCSETSF"},
	{unix.TCSBRK, "TCSBRK"}, {unix.TCXONC, "TCXONC"}, {unix.TCFLSH, "TCFLSH"},
	{unix.TIOCEXCL, "TIOCEXCL"}, {unix.TIOCNXCL, "TIOCNXCL"}, {unix.TIOCSCTTY, "TIOCSCTTY"},
	{unix.TIOCGPGRP, "TIOCGPGRP"}, {unix.TIOCSPGRP, "TIOCSPGRP"}, {unix.TIOCOUTQ, "TIOCOUTQ"},
	{unix.TIOCSTI, "TIOCSTI"}, {unix.TIOCGWINSZ, "TIOCGWINSZ"}, {unix.TIOCSWINSZ, "TIOCSWINSZ"},
	{unix.TIOCMGET, "TIOCMGET"}, {0x541b, "FIONREAD"}, {unix.TIOCNOTTY, "TIOCNOTTY"},
	{0x5421, "FIONBIO"}, {unix.TIOCGSID, "TIOCGSID"}, {unix.TIOCGPTN, "TIOCGPTN"},
	{unix.TIOCSPTLCK, "TIOCSPTLCK"}, {unix.TIOCGPTPEER, "TIOCGPTPEER"},
	{0x5450, "FIONCLEX"}, {0x5451, "FIOCLEX"}, {0x5452, "FIOASYNC"},
	{unix.TIOCSERGETLSR, "TIOCSERGETLSR"}, {unix.TIOCGPTLCK, "TIOCGPTLCK"},
	{unix.FS_IOC_GETFLAGS, "FS_IOC_GETFLAGS"}, {unix.FS_IOC_SETFLAGS, "FS_IOC_SETFLAGS"},
	{unix.FICLONE, "BTRFS_IOC_CLONE or FICLONE"}, {unix.SIOCGIFCONF, "SIOCGIFCONF"}, {unix.SIOCGIFFLAGS, "SIOCGIFFLAGS"},
	{unix.SIOCGIFINDEX, "SIOCGIFINDEX"}, {unix.SIOCGIFNAME, "SIOCGIFNAME"},
	{unix.RNDGETENTCNT, "RNDGETENTCNT"}, {unix.PERF_EVENT_IOC_ENABLE, "PERF_EVENT_IOC_ENABLE"},
	{unix.PERF_EVENT_IOC_DISABLE, "PERF_EVENT_IOC_DISABLE"}, {unix.TUNSETIFF, "TUNSETIFF"},
}

// ioctlReqStr names a request or, like strace, spells out its _IOC parts.
func ioctlReqStr(v uint64) string {
	v &= 0xffffffff
	if s, ok := ioctlReqs.name(v); ok {
		return s
	}
	dir, typ, nr, size := v>>30, (v>>8)&0xff, v&0xff, (v>>16)&0x3fff
	if dir == 0 && size == 0 {
		return hex(v)
	}
	dirs := []string{"_IOC_NONE", "_IOC_WRITE", "_IOC_READ", "_IOC_READ|_IOC_WRITE"}
	return fmt.Sprintf("_IOC(%s, %#x, %#x, %#x)", dirs[dir], typ, nr, size)
}

var sockDomains = xlat{
	{unix.AF_UNSPEC, "AF_UNSPEC"}, {unix.AF_UNIX, "AF_UNIX"}, {unix.AF_INET, "AF_INET"},
	{unix.AF_AX25, "AF_AX25"}, {unix.AF_IPX, "AF_IPX"}, {unix.AF_APPLETALK, "AF_APPLETALK"},
	{unix.AF_NETROM, "AF_NETROM"}, {unix.AF_BRIDGE, "AF_BRIDGE"}, {unix.AF_ATMPVC, "AF_ATMPVC"},
	{unix.AF_X25, "AF_X25"}, {unix.AF_INET6, "AF_INET6"}, {unix.AF_ROSE, "AF_ROSE"},
	{unix.AF_DECnet, "AF_DECnet"}, {unix.AF_NETBEUI, "AF_NETBEUI"}, {unix.AF_SECURITY, "AF_SECURITY"},
	{unix.AF_KEY, "AF_KEY"}, {unix.AF_NETLINK, "AF_NETLINK"}, {unix.AF_PACKET, "AF_PACKET"},
	{unix.AF_ASH, "AF_ASH"}, {unix.AF_ECONET, "AF_ECONET"}, {unix.AF_ATMSVC, "AF_ATMSVC"},
	{unix.AF_RDS, "AF_RDS"}, {unix.AF_SNA, "AF_SNA"}, {unix.AF_IRDA, "AF_IRDA"},
	{unix.AF_PPPOX, "AF_PPPOX"}, {unix.AF_WANPIPE, "AF_WANPIPE"}, {unix.AF_LLC, "AF_LLC"},
	{unix.AF_IB, "AF_IB"}, {unix.AF_MPLS, "AF_MPLS"}, {unix.AF_CAN, "AF_CAN"}, {unix.AF_TIPC, "AF_TIPC"},
	{unix.AF_BLUETOOTH, "AF_BLUETOOTH"}, {unix.AF_IUCV, "AF_IUCV"}, {unix.AF_RXRPC, "AF_RXRPC"},
	{unix.AF_ISDN, "AF_ISDN"}, {unix.AF_PHONET, "AF_PHONET"}, {unix.AF_IEEE802154, "AF_IEEE802154"},
	{unix.AF_CAIF, "AF_CAIF"}, {unix.AF_ALG, "AF_ALG"}, {unix.AF_NFC, "AF_NFC"}, {unix.AF_VSOCK, "AF_VSOCK"},
	{unix.AF_KCM, "AF_KCM"}, {unix.AF_QIPCRTR, "AF_QIPCRTR"}, {unix.AF_SMC, "AF_SMC"}, {unix.AF_XDP, "AF_XDP"},
	{unix.AF_MCTP, "AF_MCTP"},
}

var sockTypes = xlat{
	{unix.SOCK_STREAM, "SOCK_STREAM"}, {unix.SOCK_DGRAM, "SOCK_DGRAM"}, {unix.SOCK_RAW, "SOCK_RAW"},
	{unix.SOCK_RDM, "SOCK_RDM"}, {unix.SOCK_SEQPACKET, "SOCK_SEQPACKET"}, {unix.SOCK_DCCP, "SOCK_DCCP"},
	{unix.SOCK_PACKET, "SOCK_PACKET"},
}

var sockTypeFlags = xlat{{unix.SOCK_CLOEXEC, "SOCK_CLOEXEC"}, {unix.SOCK_NONBLOCK, "SOCK_NONBLOCK"}}

func sockTypeStr(v uint64) string {
	s := sockTypes.enum(v&0xf, true)
	if rest := v &^ 0xf; rest != 0 {
		s += "|" + sockTypeFlags.flags(rest)
	}
	return s
}

var ipProtos = xlat{
	{unix.IPPROTO_IP, "IPPROTO_IP"}, {unix.IPPROTO_ICMP, "IPPROTO_ICMP"}, {unix.IPPROTO_IGMP, "IPPROTO_IGMP"},
	{unix.IPPROTO_IPIP, "IPPROTO_IPIP"}, {unix.IPPROTO_TCP, "IPPROTO_TCP"}, {unix.IPPROTO_EGP, "IPPROTO_EGP"},
	{unix.IPPROTO_PUP, "IPPROTO_PUP"}, {unix.IPPROTO_UDP, "IPPROTO_UDP"}, {unix.IPPROTO_IDP, "IPPROTO_IDP"},
	{unix.IPPROTO_TP, "IPPROTO_TP"}, {unix.IPPROTO_DCCP, "IPPROTO_DCCP"}, {unix.IPPROTO_IPV6, "IPPROTO_IPV6"},
	{unix.IPPROTO_RSVP, "IPPROTO_RSVP"}, {unix.IPPROTO_GRE, "IPPROTO_GRE"}, {unix.IPPROTO_ESP, "IPPROTO_ESP"},
	{unix.IPPROTO_AH, "IPPROTO_AH"}, {unix.IPPROTO_ICMPV6, "IPPROTO_ICMPV6"}, {unix.IPPROTO_MTP, "IPPROTO_MTP"},
	{unix.IPPROTO_ENCAP, "IPPROTO_ENCAP"}, {unix.IPPROTO_PIM, "IPPROTO_PIM"}, {unix.IPPROTO_COMP, "IPPROTO_COMP"},
	{unix.IPPROTO_SCTP, "IPPROTO_SCTP"}, {unix.IPPROTO_UDPLITE, "IPPROTO_UDPLITE"},
	{unix.IPPROTO_MPLS, "IPPROTO_MPLS"}, {unix.IPPROTO_RAW, "IPPROTO_RAW"}, {unix.IPPROTO_MPTCP, "IPPROTO_MPTCP"},
}

var netlinkProtos = xlat{
	{unix.NETLINK_ROUTE, "NETLINK_ROUTE"}, {unix.NETLINK_USERSOCK, "NETLINK_USERSOCK"},
	{unix.NETLINK_SOCK_DIAG, "NETLINK_SOCK_DIAG"}, {unix.NETLINK_NFLOG, "NETLINK_NFLOG"},
	{unix.NETLINK_XFRM, "NETLINK_XFRM"}, {unix.NETLINK_SELINUX, "NETLINK_SELINUX"},
	{unix.NETLINK_ISCSI, "NETLINK_ISCSI"}, {unix.NETLINK_AUDIT, "NETLINK_AUDIT"},
	{unix.NETLINK_FIB_LOOKUP, "NETLINK_FIB_LOOKUP"}, {unix.NETLINK_CONNECTOR, "NETLINK_CONNECTOR"},
	{unix.NETLINK_NETFILTER, "NETLINK_NETFILTER"}, {unix.NETLINK_IP6_FW, "NETLINK_IP6_FW"},
	{unix.NETLINK_DNRTMSG, "NETLINK_DNRTMSG"}, {unix.NETLINK_KOBJECT_UEVENT, "NETLINK_KOBJECT_UEVENT"},
	{unix.NETLINK_GENERIC, "NETLINK_GENERIC"}, {unix.NETLINK_SCSITRANSPORT, "NETLINK_SCSITRANSPORT"},
	{unix.NETLINK_ECRYPTFS, "NETLINK_ECRYPTFS"}, {unix.NETLINK_RDMA, "NETLINK_RDMA"},
	{unix.NETLINK_CRYPTO, "NETLINK_CRYPTO"},
}

// sockProtoStr: the protocol's names depend on the domain (argument 0).
func sockProtoStr(domain, v uint64) string {
	switch domain {
	case unix.AF_INET, unix.AF_INET6:
		return ipProtos.enum(v, false)
	case unix.AF_NETLINK:
		return netlinkProtos.enum(v, false)
	}
	return strconv.FormatUint(v, 10)
}

var sockLevels = xlat{
	{unix.SOL_IP, "SOL_IP"}, {unix.SOL_SOCKET, "SOL_SOCKET"}, {unix.SOL_TCP, "SOL_TCP"},
	{unix.SOL_UDP, "SOL_UDP"}, {unix.SOL_IPV6, "SOL_IPV6"}, {unix.SOL_ICMPV6, "SOL_ICMPV6"},
	{unix.SOL_RAW, "SOL_RAW"}, {unix.SOL_PACKET, "SOL_PACKET"}, {unix.SOL_NETLINK, "SOL_NETLINK"},
}

var solSocketOpts = xlat{
	{unix.SO_DEBUG, "SO_DEBUG"}, {unix.SO_REUSEADDR, "SO_REUSEADDR"}, {unix.SO_TYPE, "SO_TYPE"},
	{unix.SO_ERROR, "SO_ERROR"}, {unix.SO_DONTROUTE, "SO_DONTROUTE"}, {unix.SO_BROADCAST, "SO_BROADCAST"},
	{unix.SO_SNDBUF, "SO_SNDBUF"}, {unix.SO_RCVBUF, "SO_RCVBUF"}, {unix.SO_KEEPALIVE, "SO_KEEPALIVE"},
	{unix.SO_OOBINLINE, "SO_OOBINLINE"}, {unix.SO_NO_CHECK, "SO_NO_CHECK"}, {unix.SO_PRIORITY, "SO_PRIORITY"},
	{unix.SO_LINGER, "SO_LINGER"}, {unix.SO_BSDCOMPAT, "SO_BSDCOMPAT"}, {unix.SO_REUSEPORT, "SO_REUSEPORT"},
	{unix.SO_PASSCRED, "SO_PASSCRED"}, {unix.SO_PEERCRED, "SO_PEERCRED"}, {unix.SO_RCVLOWAT, "SO_RCVLOWAT"},
	{unix.SO_SNDLOWAT, "SO_SNDLOWAT"}, {unix.SO_RCVTIMEO_OLD, "SO_RCVTIMEO_OLD"},
	{unix.SO_SNDTIMEO_OLD, "SO_SNDTIMEO_OLD"}, {unix.SO_BINDTODEVICE, "SO_BINDTODEVICE"},
	{unix.SO_TIMESTAMP_OLD, "SO_TIMESTAMP_OLD"}, {unix.SO_ACCEPTCONN, "SO_ACCEPTCONN"},
	{unix.SO_SNDBUFFORCE, "SO_SNDBUFFORCE"}, {unix.SO_RCVBUFFORCE, "SO_RCVBUFFORCE"},
	{unix.SO_PASSSEC, "SO_PASSSEC"}, {unix.SO_MARK, "SO_MARK"}, {unix.SO_PROTOCOL, "SO_PROTOCOL"},
	{unix.SO_DOMAIN, "SO_DOMAIN"}, {unix.SO_BUSY_POLL, "SO_BUSY_POLL"},
}

var archPrctlOps = xlat{
	{0x1001, "ARCH_SET_GS"}, {0x1002, "ARCH_SET_FS"}, {0x1003, "ARCH_GET_FS"}, {0x1004, "ARCH_GET_GS"},
	{0x1011, "ARCH_GET_CPUID"}, {0x1012, "ARCH_SET_CPUID"}, {0x1021, "ARCH_GET_XCOMP_SUPP"},
	{0x1022, "ARCH_GET_XCOMP_PERM"}, {0x1023, "ARCH_REQ_XCOMP_PERM"},
	{0x1024, "ARCH_GET_XCOMP_GUEST_PERM"}, {0x1025, "ARCH_REQ_XCOMP_GUEST_PERM"},
	{0x2001, "ARCH_MAP_VDSO_X32"}, {0x2002, "ARCH_MAP_VDSO_32"}, {0x2003, "ARCH_MAP_VDSO_64"},
}

var prctlOps = xlat{
	{unix.PR_SET_PDEATHSIG, "PR_SET_PDEATHSIG"}, {unix.PR_GET_PDEATHSIG, "PR_GET_PDEATHSIG"},
	{unix.PR_GET_DUMPABLE, "PR_GET_DUMPABLE"}, {unix.PR_SET_DUMPABLE, "PR_SET_DUMPABLE"},
	{unix.PR_GET_UNALIGN, "PR_GET_UNALIGN"}, {unix.PR_SET_UNALIGN, "PR_SET_UNALIGN"},
	{unix.PR_GET_KEEPCAPS, "PR_GET_KEEPCAPS"}, {unix.PR_SET_KEEPCAPS, "PR_SET_KEEPCAPS"},
	{unix.PR_GET_FPEMU, "PR_GET_FPEMU"}, {unix.PR_SET_FPEMU, "PR_SET_FPEMU"},
	{unix.PR_GET_FPEXC, "PR_GET_FPEXC"}, {unix.PR_SET_FPEXC, "PR_SET_FPEXC"},
	{unix.PR_GET_TIMING, "PR_GET_TIMING"}, {unix.PR_SET_TIMING, "PR_SET_TIMING"},
	{unix.PR_SET_NAME, "PR_SET_NAME"}, {unix.PR_GET_NAME, "PR_GET_NAME"},
	{unix.PR_GET_ENDIAN, "PR_GET_ENDIAN"}, {unix.PR_SET_ENDIAN, "PR_SET_ENDIAN"},
	{unix.PR_GET_SECCOMP, "PR_GET_SECCOMP"}, {unix.PR_SET_SECCOMP, "PR_SET_SECCOMP"},
	{unix.PR_CAPBSET_READ, "PR_CAPBSET_READ"}, {unix.PR_CAPBSET_DROP, "PR_CAPBSET_DROP"},
	{unix.PR_GET_TSC, "PR_GET_TSC"}, {unix.PR_SET_TSC, "PR_SET_TSC"},
	{unix.PR_GET_SECUREBITS, "PR_GET_SECUREBITS"}, {unix.PR_SET_SECUREBITS, "PR_SET_SECUREBITS"},
	{unix.PR_SET_TIMERSLACK, "PR_SET_TIMERSLACK"}, {unix.PR_GET_TIMERSLACK, "PR_GET_TIMERSLACK"},
	{unix.PR_TASK_PERF_EVENTS_DISABLE, "PR_TASK_PERF_EVENTS_DISABLE"},
	{unix.PR_TASK_PERF_EVENTS_ENABLE, "PR_TASK_PERF_EVENTS_ENABLE"},
	{unix.PR_MCE_KILL, "PR_MCE_KILL"}, {unix.PR_MCE_KILL_GET, "PR_MCE_KILL_GET"},
	{unix.PR_SET_MM, "PR_SET_MM"}, {unix.PR_SET_PTRACER, "PR_SET_PTRACER"},
	{unix.PR_SET_CHILD_SUBREAPER, "PR_SET_CHILD_SUBREAPER"},
	{unix.PR_GET_CHILD_SUBREAPER, "PR_GET_CHILD_SUBREAPER"},
	{unix.PR_SET_NO_NEW_PRIVS, "PR_SET_NO_NEW_PRIVS"}, {unix.PR_GET_NO_NEW_PRIVS, "PR_GET_NO_NEW_PRIVS"},
	{unix.PR_GET_TID_ADDRESS, "PR_GET_TID_ADDRESS"}, {unix.PR_SET_THP_DISABLE, "PR_SET_THP_DISABLE"},
	{unix.PR_GET_THP_DISABLE, "PR_GET_THP_DISABLE"}, {unix.PR_MPX_ENABLE_MANAGEMENT, "PR_MPX_ENABLE_MANAGEMENT"},
	{unix.PR_MPX_DISABLE_MANAGEMENT, "PR_MPX_DISABLE_MANAGEMENT"}, {unix.PR_SET_FP_MODE, "PR_SET_FP_MODE"},
	{unix.PR_GET_FP_MODE, "PR_GET_FP_MODE"}, {unix.PR_CAP_AMBIENT, "PR_CAP_AMBIENT"},
	{unix.PR_SVE_SET_VL, "PR_SVE_SET_VL"}, {unix.PR_SVE_GET_VL, "PR_SVE_GET_VL"},
	{unix.PR_GET_SPECULATION_CTRL, "PR_GET_SPECULATION_CTRL"},
	{unix.PR_SET_SPECULATION_CTRL, "PR_SET_SPECULATION_CTRL"},
	{unix.PR_SET_TAGGED_ADDR_CTRL, "PR_SET_TAGGED_ADDR_CTRL"},
	{unix.PR_GET_TAGGED_ADDR_CTRL, "PR_GET_TAGGED_ADDR_CTRL"},
	{unix.PR_SET_IO_FLUSHER, "PR_SET_IO_FLUSHER"}, {unix.PR_GET_IO_FLUSHER, "PR_GET_IO_FLUSHER"},
	{unix.PR_SET_SYSCALL_USER_DISPATCH, "PR_SET_SYSCALL_USER_DISPATCH"},
	{unix.PR_SCHED_CORE, "PR_SCHED_CORE"}, {unix.PR_SET_VMA, "PR_SET_VMA"},
}

var dumpable = xlat{{0, "SUID_DUMP_DISABLE"}, {1, "SUID_DUMP_USER"}, {2, "SUID_DUMP_ROOT"}}

// Futex commands (linux/futex.h); x/sys/unix does not define them.
const (
	futexWait = iota
	futexWake
	futexFd
	futexRequeue
	futexCmpRequeue
	futexWakeOp
	futexLockPi
	futexUnlockPi
	futexTrylockPi
	futexWaitBitset
	futexWakeBitset
	futexWaitRequeuePi
	futexCmpRequeuePi

	futexPrivateFlag   = 128
	futexClockRealtime = 256
)

var futexCmds = xlat{
	{futexWait, "FUTEX_WAIT"}, {futexWake, "FUTEX_WAKE"}, {futexFd, "FUTEX_FD"},
	{futexRequeue, "FUTEX_REQUEUE"}, {futexCmpRequeue, "FUTEX_CMP_REQUEUE"},
	{futexWakeOp, "FUTEX_WAKE_OP"}, {futexLockPi, "FUTEX_LOCK_PI"},
	{futexUnlockPi, "FUTEX_UNLOCK_PI"}, {futexTrylockPi, "FUTEX_TRYLOCK_PI"},
	{futexWaitBitset, "FUTEX_WAIT_BITSET"}, {futexWakeBitset, "FUTEX_WAKE_BITSET"},
	{futexWaitRequeuePi, "FUTEX_WAIT_REQUEUE_PI"}, {futexCmpRequeuePi, "FUTEX_CMP_REQUEUE_PI"},
	{13, "FUTEX_LOCK_PI2"},
}

// futexOpStr: the command, "_PRIVATE" when FUTEX_PRIVATE_FLAG, then
// |FUTEX_CLOCK_REALTIME.
func futexOpStr(v uint64) string {
	cmd := v &^ (futexPrivateFlag | futexClockRealtime)
	s, ok := futexCmds.name(cmd)
	if !ok {
		return hex(v)
	}
	if v&futexPrivateFlag != 0 {
		s += "_PRIVATE"
	}
	if v&futexClockRealtime != 0 {
		s += "|FUTEX_CLOCK_REALTIME"
	}
	return s
}
