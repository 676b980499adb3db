//go:build linux && amd64

package syscalls

import (
	"strconv"
	"strings"
	"time"
)

// Structures as strace -v (-e abbrev=none) shows them: every field.
// The abbreviated forms are in structs.go; a kind not here shows the
// same either way.

// structFull is kind k's unabbreviated text from its capture b, "" for
// a kind whose text does not change.
func (x *ctx) structFull(k Kind, b []byte) string {
	switch k {
	case KindStat:
		return statFull(b)
	case KindStatx:
		return statxFull(b)
	case KindUtsname:
		var f fields
		for i, n := range []string{"sysname", "nodename", "release", "version", "machine", "domainname"} {
			f.add(n, quoter(x.o.Hex).quote(b[65*i:65*i+65], 65, true, false))
		}
		return f.close()
	case KindRusage:
		return rusageFull(b)
	}
	return ""
}

// fields builds "{a=1, b=2}".
type fields struct{ b strings.Builder }

func (f *fields) add(name, val string) {
	if f.b.Len() == 0 {
		f.b.WriteByte('{')
	} else {
		f.b.WriteString(", ")
	}
	f.b.WriteString(name)
	f.b.WriteByte('=')
	f.b.WriteString(val)
}

func (f *fields) close() string { return f.b.String() + "}" }

func leU64(b []byte, off int) string { return strconv.FormatUint(le.Uint64(b[off:]), 10) }
func leU32(b []byte, off int) string { return strconv.FormatUint(uint64(le.Uint32(b[off:])), 10) }

// statFull is struct stat (asm/stat.h, x86-64) whole.
func statFull(b []byte) string {
	var f fields
	mode := uint64(le.Uint32(b[24:]))
	f.add("st_dev", makedev(le.Uint64(b)))
	f.add("st_ino", leU64(b, 8))
	f.add("st_mode", modeStr(mode))
	f.add("st_nlink", leU64(b, 16))
	f.add("st_uid", leU32(b, 28))
	f.add("st_gid", leU32(b, 32))
	f.add("st_blksize", leU64(b, 56))
	f.add("st_blocks", leU64(b, 64))
	if t := mode & 0o170000; t == 0o020000 || t == 0o060000 {
		f.add("st_rdev", makedev(le.Uint64(b[40:])))
	} else {
		f.add("st_size", leU64(b, 48))
	}
	for i, n := range []string{"st_atime", "st_mtime", "st_ctime"} {
		sec, nsec := int64(le.Uint64(b[72+16*i:])), le.Uint64(b[80+16*i:])
		f.add(n, strconv.FormatInt(sec, 10)+timeComment(sec, nsec))
		f.add(n+"_nsec", strconv.FormatUint(nsec, 10))
	}
	return f.close()
}

// statx's mask bits that say which fields are valid (linux/stat.h).
const (
	statxNlink  = 0x4
	statxUID    = 0x8
	statxGID    = 0x10
	statxMode   = 0x3 // STATX_TYPE|STATX_MODE
	statxAtime  = 0x20
	statxMtime  = 0x40
	statxCtime  = 0x80
	statxIno    = 0x100
	statxSize   = 0x200
	statxBlocks = 0x400
	statxBtime  = 0x800
	statxMntID  = 0x1000
)

// maskField is a statx field shown when its mask bit is set.
type maskField struct {
	bit  uint64
	name string
	off  int
}

// statxFull is struct statx whole: the fields its mask says are valid,
// as strace prints them.
func statxFull(b []byte) string {
	var f fields
	mask := uint64(le.Uint32(b))
	f.add("stx_mask", statxMask.flags(mask))
	f.add("stx_blksize", leU32(b, 4))
	f.add("stx_attributes", statxAttrs.flags(le.Uint64(b[8:])))
	for _, e := range []maskField{{statxNlink, "stx_nlink", 16}, {statxUID, "stx_uid", 20}, {statxGID, "stx_gid", 24}} {
		if mask&e.bit != 0 {
			f.add(e.name, leU32(b, e.off))
		}
	}
	if mask&statxMode != 0 {
		f.add("stx_mode", modeStr(uint64(le.Uint16(b[28:]))))
	}
	if mask&statxIno != 0 {
		f.add("stx_ino", leU64(b, 32))
	}
	if mask&statxSize != 0 {
		f.add("stx_size", leU64(b, 40))
	}
	if mask&statxBlocks != 0 {
		f.add("stx_blocks", leU64(b, 48))
	}
	f.add("stx_attributes_mask", statxAttrs.flags(le.Uint64(b[56:])))
	for _, e := range []maskField{{statxAtime, "stx_atime", 64}, {statxBtime, "stx_btime", 80}, {statxCtime, "stx_ctime", 96}, {statxMtime, "stx_mtime", 112}} {
		if mask&e.bit != 0 {
			sec, nsec := int64(le.Uint64(b[e.off:])), uint64(le.Uint32(b[e.off+8:]))
			f.add(e.name, "{tv_sec="+strconv.FormatInt(sec, 10)+", tv_nsec="+strconv.FormatUint(nsec, 10)+"}"+timeComment(sec, nsec))
		}
	}
	for i, n := range []string{"stx_rdev_major", "stx_rdev_minor", "stx_dev_major", "stx_dev_minor"} {
		f.add(n, leU32(b, 128+4*i))
	}
	if mask&statxMntID != 0 {
		f.add("stx_mnt_id", hex(le.Uint64(b[144:])))
	}
	return f.close()
}

// timeComment is strace's " /* 2026-11-25T18:00:57.264750213+0000 */"
// after a time in seconds: local time, the nanoseconds when not 0;
// nothing for 0.
func timeComment(sec int64, nsec uint64) string {
	if (sec == 0 && nsec == 0) || nsec > 999999999 {
		return ""
	}
	t := time.Unix(sec, int64(nsec))
	s := t.Format("2006-01-02T15:04:05")
	if nsec > 0 {
		s += "." + strconv.FormatUint(nsec+1e9, 10)[1:]
	}
	return " /* " + s + t.Format("-0700") + " */"
}

// rusageFull is struct rusage whole: two timevals, then fourteen longs.
func rusageFull(b []byte) string {
	var f fields
	for i, n := range []string{"ru_utime", "ru_stime"} {
		f.add(n, "{tv_sec="+strconv.FormatInt(int64(le.Uint64(b[16*i:])), 10)+", tv_usec="+strconv.FormatInt(int64(le.Uint64(b[16*i+8:])), 10)+"}")
	}
	for i, n := range []string{"ru_maxrss", "ru_ixrss", "ru_idrss", "ru_isrss", "ru_minflt", "ru_majflt", "ru_nswap",
		"ru_inblock", "ru_oublock", "ru_msgsnd", "ru_msgrcv", "ru_nsignals", "ru_nvcsw", "ru_nivcsw"} {
		f.add(n, strconv.FormatInt(int64(le.Uint64(b[32+8*i:])), 10))
	}
	return f.close()
}

// direntTypes are d_type's names.
var direntTypes = xlat{
	{0, "DT_UNKNOWN"}, {1, "DT_FIFO"}, {2, "DT_CHR"}, {4, "DT_DIR"}, {6, "DT_BLK"},
	{8, "DT_REG"}, {10, "DT_LNK"}, {12, "DT_SOCK"}, {14, "DT_WHT"},
}

// direntsFull is getdents64's entries, each whole, as strace -v shows
// them, "..." for those an engine counted but did not capture; "" when b
// is not a whole list.
func direntsFull(h quoter, b []byte) string {
	var parts []string
	for len(b) >= 19 {
		n := int(le.Uint16(b[16:]))
		if n < 19 || n > len(b) {
			return ""
		}
		if b[18] == direntUnseen {
			// Counted, not captured (WithDirents): said, not made up.
			parts = append(parts, "...")
			break
		}
		name := b[19:n]
		if i := strings.IndexByte(string(name), 0); i >= 0 {
			name = name[:i]
		}
		var f fields
		f.add("d_ino", leU64(b, 0))
		f.add("d_off", strconv.FormatInt(int64(le.Uint64(b[8:])), 10))
		f.add("d_reclen", strconv.Itoa(n))
		f.add("d_type", direntTypes.enum(uint64(b[18]), true))
		f.add("d_name", h.quote(name, len(name), false, false))
		parts = append(parts, f.close())
		b = b[n:]
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
