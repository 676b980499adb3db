//go:build linux && amd64

package elfsym

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"strings"
	"testing"
)

// note encodes one ELF note as a linker lays it out.
func note(owner string, typ uint32, desc []byte) []byte {
	name := append([]byte(owner), 0)
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(name)))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(desc)))
	b = binary.LittleEndian.AppendUint32(b, typ)
	b = append(b, name...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	b = append(b, desc...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// stapDesc encodes a stapsdt descriptor; strs are provider, name, args.
func stapDesc(pc, base, sem uint64, strs string) []byte {
	b := binary.LittleEndian.AppendUint64(nil, pc)
	b = binary.LittleEndian.AppendUint64(b, base)
	b = binary.LittleEndian.AppendUint64(b, sem)
	return append(b, strs...)
}

func TestParseStapNotes(t *testing.T) {
	cat := func(bs ...[]byte) []byte { return bytes.Join(bs, nil) }
	gc := note("stapsdt", 3, stapDesc(0x4287f3, 0x8cc5a0, 0xa8426e, "python\x00gc__start\x00-4@112(%rsp)\x00"))
	zero := note("stapsdt", 3, stapDesc(0x1170, 0x2018, 0, "fixture\x00zero\x00\x00"))
	for _, tt := range []struct {
		name string
		data []byte
		want []stapNote
		err  string
	}{
		{"empty", nil, nil, ""},
		{"one", gc, []stapNote{{PC: 0x4287f3, Base: 0x8cc5a0, Semaphore: 0xa8426e, Provider: "python", Name: "gc__start", Args: "-4@112(%rsp)"}}, ""},
		{"two, no args", cat(gc, zero), []stapNote{
			{PC: 0x4287f3, Base: 0x8cc5a0, Semaphore: 0xa8426e, Provider: "python", Name: "gc__start", Args: "-4@112(%rsp)"},
			{PC: 0x1170, Base: 0x2018, Provider: "fixture", Name: "zero"}}, ""},
		{"other owners and types skipped", cat(note("GNU", 3, []byte{1, 2, 3, 4}), note("stapsdt", 4, []byte{1}), zero),
			[]stapNote{{PC: 0x1170, Base: 0x2018, Provider: "fixture", Name: "zero"}}, ""},
		{"args without their NUL", note("stapsdt", 3, stapDesc(1, 2, 0, "p\x00n\x00%rax")),
			[]stapNote{{PC: 1, Base: 2, Provider: "p", Name: "n", Args: "%rax"}}, ""},
		{"truncated header", gc[:10], nil, "truncated header"},
		{"descriptor past the end", gc[:len(gc)-8], nil, "runs past the section"},
		{"short descriptor", note("stapsdt", 3, make([]byte, 16)), nil, "descriptor of 16 bytes"},
		{"unterminated name", note("stapsdt", 3, stapDesc(1, 2, 0, "p")), nil, "not NUL-terminated"},
		{"no provider", note("stapsdt", 3, stapDesc(1, 2, 0, "\x00n\x00\x00")), nil, "without a provider"},
	} {
		got, err := parseStapNotes(tt.data)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: error %v, want %q", tt.name, err, tt.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %+v, %v, want %+v", tt.name, got, err, tt.want)
		}
	}
}

func TestStapNoteAdjust(t *testing.T) {
	for _, tt := range []struct {
		n        stapNote
		stapBase uint64
		pc, sem  uint64
	}{
		{stapNote{PC: 0x1000, Base: 0x2000, Semaphore: 0x3000}, 0x2000, 0x1000, 0x3000}, // not prelinked
		{stapNote{PC: 0x1000, Base: 0x2000, Semaphore: 0x3000}, 0x12000, 0x11000, 0x13000},
		{stapNote{PC: 0x1000, Base: 0x2000}, 0x12000, 0x11000, 0},                  // no semaphore stays none
		{stapNote{PC: 0x1000, Base: 0x2000, Semaphore: 0x3000}, 0, 0x1000, 0x3000}, // no .stapsdt.base
		{stapNote{PC: 0x11000, Base: 0x12000}, 0x2000, 0x1000, 0},                  // moved down
	} {
		n := tt.n
		n.adjust(tt.stapBase)
		if n.PC != tt.pc || n.Semaphore != tt.sem {
			t.Errorf("%+v adjusted to base %#x: pc %#x sem %#x, want %#x %#x", tt.n, tt.stapBase, n.PC, n.Semaphore, tt.pc, tt.sem)
		}
	}
}
