package pad

import (
	"encoding/binary"
	"fmt"
)

// A dispatch pad serves a `syscall` whose number the instructions before
// it do not set (glibc's syscall(), a Go runtime's Syscall6): it runs the
// displaced instructions, then compares eax with the probed numbers. A
// call not among them is made from the pad, which jumps back after the
// original `syscall`: no stop, no record. A probed one jumps to its own
// system call pad, with no displaced instructions (BuildSys), when it has
// one; else to the original `syscall`, where the tracer's trap takes it
// (ptrace's padsystrap.go). The comparisons change neither flags nor any register
// but rcx, which the `syscall` itself overwrites: `lea -nr(%rax),%rcx;
// jrcxz` per number.

// MaxDispatch is the most numbers a dispatch pad compares.
const MaxDispatch = 64

// DispatchParts are offsets in a dispatch pad: where its comparisons
// start (the displaced instructions end) and its `syscall`.
type DispatchParts struct{ Compare, Syscall int }

// BuildDispatch returns the dispatch pad of the `syscall` at sc,
// assembled to run at `at`, its displaced instructions (relocated, with no
// jump back) first, for the numbers nrs; to holds the system call pads of
// those that have one (within ±2 GiB).
func BuildDispatch(displaced []byte, at uint64, nrs []int, to map[int]uint64, sc uint64) ([]byte, DispatchParts, error) {
	if len(nrs) > MaxDispatch {
		return nil, DispatchParts{}, fmt.Errorf("pad: %d numbers to compare, more than %d", len(nrs), MaxDispatch)
	}
	code := append([]byte(nil), displaced...)
	parts := DispatchParts{Compare: len(code)}
	var toProbed []int // the rel32 of each jmp to the probed exit
	for _, nr := range nrs {
		// lea -nr(%rax),%rcx; jrcxz +2; jmp +5; jmp its pad or the trap
		code = append(code, 0x48, 0x8d, 0x88)
		code = binary.LittleEndian.AppendUint32(code, uint32(-int32(nr)))
		code = append(code, 0xe3, 0x02, 0xeb, 0x05, 0xe9)
		if pad, ok := to[nr]; ok {
			rel := int64(pad) - int64(at+uint64(len(code))+4)
			if rel != int64(int32(rel)) {
				return nil, DispatchParts{}, fmt.Errorf("pad: the pad of call %d at %#x is beyond ±2 GiB of %#x", nr, pad, at)
			}
			code = binary.LittleEndian.AppendUint32(code, uint32(int32(rel)))
			continue
		}
		toProbed = append(toProbed, len(code))
		code = append(code, 0, 0, 0, 0)
	}
	parts.Syscall = len(code)
	code = append(code, 0x0f, 0x05)
	code = AbsJmp(code, sc+2)
	probed := len(code)
	for _, at := range toProbed {
		binary.LittleEndian.PutUint32(code[at:], uint32(int32(probed-(at+4))))
	}
	return AbsJmp(code, sc), parts, nil
}

// AbsJmp appends `jmp *0(%rip)` to `to`, which reaches anywhere.
func AbsJmp(code []byte, to uint64) []byte {
	code = append(code, 0xff, 0x25, 0, 0, 0, 0)
	return binary.LittleEndian.AppendUint64(code, to)
}

// A watch pad serves a `syscall` of a call the tracer must see only in
// some cases, not probed itself: mmap of anonymous executable memory,
// mprotect and pkey_mprotect adding PROT_EXEC (code written at run
// time), prctl(PR_SET_SECCOMP). It tests the arguments with no flag
// changed (only rcx and r11, which the call overwrites): a bit of an
// argument's low byte through a table in the gate (WatchTable), a value
// by lea and jrcxz. Those cases go to the original `syscall`, whose trap
// takes them; the others are made from the pad.

// Watch tables: a byte b's entry is 1 when b has the bit.
const (
	WatchExec = 0   // PROT_EXEC (4)
	WatchAnon = 256 // MAP_ANONYMOUS (0x20)
)

// WatchTable is the 512 bytes a watch pad reads: at WatchExec the
// entries of PROT_EXEC, at WatchAnon those of MAP_ANONYMOUS.
func WatchTable() []byte {
	t := make([]byte, 512)
	for b := range 256 {
		t[WatchExec+b] = byte(b >> 2 & 1)
		t[WatchAnon+b] = byte(b >> 5 & 1)
	}
	return t
}

// WatchBit is a test of an argument's low byte (Reg: 2 rdx, 10 r10)
// against the table at Off.
type WatchBit struct{ Reg, Off int }

// BuildWatch returns the watch pad of the `syscall` at sc, after its
// displaced instructions (relocated, no jump back): the call goes to the
// trap when every bit tests set (table at the absolute address table),
// or, with eq set, when rdi equals *eq.
func BuildWatch(displaced []byte, bits []WatchBit, eq *int32, table, sc uint64) ([]byte, DispatchParts, error) {
	code := append([]byte(nil), displaced...)
	parts := DispatchParts{Compare: len(code)}
	var toCall []int // each jrcxz's rel8 to the call
	if len(bits) > 0 {
		code = append(code, 0x49, 0xbb) // movabs $table,%r11
		code = binary.LittleEndian.AppendUint64(code, table)
	}
	for _, b := range bits {
		switch b.Reg {
		case 2:
			code = append(code, 0x0f, 0xb6, 0xca) // movzbl %dl,%ecx
		case 10:
			code = append(code, 0x41, 0x0f, 0xb6, 0xca) // movzbl %r10b,%ecx
		default:
			return nil, parts, fmt.Errorf("pad: a watch of register %d", b.Reg)
		}
		// movzbl off(%r11,%rcx,1),%ecx; jrcxz call
		code = append(code, 0x41, 0x0f, 0xb6, 0x8c, 0x0b)
		code = binary.LittleEndian.AppendUint32(code, uint32(b.Off))
		code = append(code, 0xe3, 0)
		toCall = append(toCall, len(code)-1)
	}
	if eq != nil {
		// lea -v(%rdi),%rcx; jrcxz +2 (to the trap); jmp short call
		code = append(code, 0x48, 0x8d, 0x8f)
		code = binary.LittleEndian.AppendUint32(code, uint32(-*eq))
		code = append(code, 0xe3, 0x02, 0xeb, 0)
		toCall = append(toCall, len(code)-1)
	}
	code = AbsJmp(code, sc) // the trap
	parts.Syscall = len(code)
	for _, at := range toCall {
		rel := parts.Syscall - (at + 1)
		if rel > 127 {
			return nil, parts, fmt.Errorf("pad: a watch's jump of %d bytes", rel)
		}
		code[at] = byte(rel)
	}
	code = append(code, 0x0f, 0x05)
	return AbsJmp(code, sc+2), parts, nil
}
