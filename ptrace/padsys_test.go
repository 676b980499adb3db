//go:build linux && amd64

package ptrace

import (
	"encoding/binary"
	"testing"

	"golang.org/x/sys/unix"
)

// runFilter runs a classic BPF seccomp program on one call: number nr
// made from ip (the few instructions filterProgram and gateProgram use).
func runFilter(t *testing.T, prog []unix.SockFilter, nr uint32, ip uint64) uint32 {
	var data [64]byte
	binary.LittleEndian.PutUint32(data[0:], nr)
	binary.LittleEndian.PutUint32(data[4:], unix.AUDIT_ARCH_X86_64)
	binary.LittleEndian.PutUint64(data[8:], ip)
	var a uint32
	for pc := 0; pc < len(prog); pc++ {
		in := prog[pc]
		switch in.Code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			a = binary.LittleEndian.Uint32(data[in.K:])
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K:
			ok := a == in.K
			if in.Code&0xf0 == unix.BPF_JGE {
				ok = a >= in.K
			}
			if ok {
				pc += int(in.Jt)
			} else {
				pc += int(in.Jf)
			}
		case unix.BPF_JMP | unix.BPF_JA:
			pc += int(in.K)
		case unix.BPF_RET | unix.BPF_K:
			return in.K
		default:
			t.Fatalf("instruction %#x", in.Code)
		}
	}
	t.Fatal("no return")
	return 0
}

// TestGateProgram: calls made from the gate are let through; the others
// as filterProgram says (the probed stop, the rest run).
func TestGateProgram(t *testing.T) {
	const gate, size = 0x7f12_3450_0000, 1 << 20
	for _, nrs := range [][]uint32{nil, {unix.SYS_GETPPID, unix.SYS_READ}} {
		prog := gateProgram(filterProgram(nrs), gate, size)
		for _, c := range []struct {
			nr   uint32
			ip   uint64
			want uint32
		}{
			{unix.SYS_GETPPID, gate + 100, unix.SECCOMP_RET_ALLOW},
			{unix.SYS_GETPPID, gate, unix.SECCOMP_RET_ALLOW},
			{unix.SYS_GETPPID, gate + size - 1, unix.SECCOMP_RET_ALLOW},
			{unix.SYS_GETPPID, gate + size, unix.SECCOMP_RET_TRACE},
			{unix.SYS_GETPPID, gate - 1, unix.SECCOMP_RET_TRACE},
			{unix.SYS_GETPPID, gate + 1<<32 + 100, unix.SECCOMP_RET_TRACE}, // the high half differs
			{unix.SYS_READ, 0x5555_0000_1000, unix.SECCOMP_RET_TRACE},
			{unix.SYS_WRITE, 0x5555_0000_1000, map[bool]uint32{true: unix.SECCOMP_RET_TRACE, false: unix.SECCOMP_RET_ALLOW}[nrs == nil]},
		} {
			if got := runFilter(t, prog, c.nr, c.ip); got != c.want {
				t.Errorf("nrs %v: call %d from %#x: %#x, want %#x", nrs, c.nr, c.ip, got, c.want)
			}
		}
	}
}
