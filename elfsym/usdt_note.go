//go:build linux && amd64

package elfsym

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// ntStapSDT is the note type of a SystemTap static probe descriptor, in
// notes owned by "stapsdt" (sys/sdt.h).
const ntStapSDT = 3

// stapNote is one .note.stapsdt descriptor as the file holds it: addresses
// are link-time and not yet adjusted for prelink (see adjust).
type stapNote struct {
	PC        uint64 // the probe's nop
	Base      uint64 // link-time address of .stapsdt.base when the note was written
	Semaphore uint64 // 0: none
	Provider  string
	Name      string
	Args      string // operands separated by blanks: "8@%rbx -4@112(%rsp)"
}

// parseStapNotes decodes the notes of a .note.stapsdt section (64-bit,
// little-endian: x86-64 only). Notes of other owners or types are skipped,
// as tools may merge note sections; a truncated note is an error.
func parseStapNotes(data []byte) ([]stapNote, error) {
	var notes []stapNote
	le := binary.LittleEndian
	for off := 0; off < len(data); {
		if len(data)-off < 12 {
			return nil, fmt.Errorf("note at %#x: truncated header", off)
		}
		namesz, descsz, typ := le.Uint32(data[off:]), le.Uint32(data[off+4:]), le.Uint32(data[off+8:])
		nameOff := off + 12
		descOff := nameOff + align4(int(namesz))
		next := descOff + align4(int(descsz))
		if int(namesz) < 0 || int(descsz) < 0 || descOff+int(descsz) > len(data) || descOff < nameOff {
			return nil, fmt.Errorf("note at %#x: name (%d bytes) or descriptor (%d bytes) runs past the section", off, namesz, descsz)
		}
		name := string(bytes.TrimRight(data[nameOff:nameOff+int(namesz)], "\x00"))
		if name == "stapsdt" && typ == ntStapSDT {
			n, err := parseStapDesc(data[descOff : descOff+int(descsz)])
			if err != nil {
				return nil, fmt.Errorf("note at %#x: %w", off, err)
			}
			notes = append(notes, n)
		}
		off = next
	}
	return notes, nil
}

// parseStapDesc decodes one descriptor: pc, base and semaphore (8 bytes
// each), then the NUL-terminated provider, name and argument strings.
func parseStapDesc(d []byte) (stapNote, error) {
	le := binary.LittleEndian
	if len(d) < 24 {
		return stapNote{}, fmt.Errorf("descriptor of %d bytes, want at least 24", len(d))
	}
	n := stapNote{PC: le.Uint64(d), Base: le.Uint64(d[8:]), Semaphore: le.Uint64(d[16:])}
	strs := d[24:]
	var fields [3]string
	for i := range fields {
		j := bytes.IndexByte(strs, 0)
		if j < 0 {
			if i == 2 {
				// Some writers drop the last NUL of an empty argument list.
				fields[i] = string(strs)
				break
			}
			return stapNote{}, fmt.Errorf("descriptor strings are not NUL-terminated")
		}
		fields[i], strs = string(strs[:j]), strs[j+1:]
	}
	n.Provider, n.Name, n.Args = fields[0], fields[1], fields[2]
	if n.Provider == "" || n.Name == "" {
		return stapNote{}, fmt.Errorf("descriptor without a provider or name")
	}
	return n, nil
}

func align4(n int) int { return (n + 3) &^ 3 }

// adjust moves a note's addresses by how far prelink moved the
// .stapsdt.base section since the note was written (stapBase is its
// address now, 0 when the file has none): pc and semaphore move with it.
func (n *stapNote) adjust(stapBase uint64) {
	if stapBase == 0 || n.Base == 0 || stapBase == n.Base {
		return
	}
	d := stapBase - n.Base
	n.PC += d
	if n.Semaphore != 0 {
		n.Semaphore += d
	}
	n.Base = stapBase
}
