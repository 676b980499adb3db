//go:build linux && amd64

package ssol

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// fakeMem is a sparse byte-addressed memory: reading or writing a byte
// that was never stored faults, except in the writable stack window.
type fakeMem struct {
	b                map[uint64]byte
	stackLo, stackHi uint64
}

var errFault = errors.New("fault")

func newMem(stackLo, stackHi uint64) *fakeMem {
	return &fakeMem{b: map[uint64]byte{}, stackLo: stackLo, stackHi: stackHi}
}

func (m *fakeMem) ReadAt(p []byte, addr uint64) error {
	for i := range p {
		v, ok := m.b[addr+uint64(i)]
		if !ok {
			return fmt.Errorf("read %#x: %w", addr+uint64(i), errFault)
		}
		p[i] = v
	}
	return nil
}

func (m *fakeMem) WriteAt(p []byte, addr uint64) error {
	if addr < m.stackLo || addr+uint64(len(p)) > m.stackHi {
		return fmt.Errorf("write %#x: %w", addr, errFault)
	}
	for i, v := range p {
		m.b[addr+uint64(i)] = v
	}
	return nil
}

func (m *fakeMem) put64(addr, v uint64) {
	for i := range 8 {
		m.b[addr+uint64(i)] = byte(v >> (8 * i))
	}
}

func (m *fakeMem) get64(t *testing.T, addr uint64) uint64 {
	t.Helper()
	var b [8]byte
	if err := m.ReadAt(b[:], addr); err != nil {
		t.Fatal(err)
	}
	return binary.LittleEndian.Uint64(b[:])
}

// hexBytes parses "48 8b 05 ..." (spaces optional).
func hexBytes(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

// regByName gives tests access to registers by name.
func regByName(r *unix.PtraceRegs, name string) *uint64 {
	switch name {
	case "rip":
		return &r.Rip
	case "eflags":
		return &r.Eflags
	case "fs_base":
		return &r.Fs_base
	case "gs_base":
		return &r.Gs_base
	}
	for i, n := range regNames {
		if n == name {
			return gpr(r, i)
		}
	}
	panic("no register " + name)
}

func le32(v int64) []byte  { return binary.LittleEndian.AppendUint32(nil, uint32(int32(v))) }
func le64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

func cat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}
