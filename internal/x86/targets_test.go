package x86

import (
	"slices"
	"testing"
)

// Targets finds direct branch targets past bytes that do not decode (d5:
// APX, stepped over a byte at a time) and RIP-relative addresses; the
// assertion was ssol.BranchTargets', which this replaced.
func TestTargets(t *testing.T) {
	const at = 0x1000
	var got []uint64
	// je +2; d5 (undecodable); call +0; ret
	Targets([]byte{0x74, 0x02, 0xd5, 0xe8, 0, 0, 0, 0, 0xc3}, at, func(a uint64) { got = append(got, a) })
	if want := []uint64{at + 4, at + 8}; !slices.Equal(got, want) {
		t.Fatalf("Targets = %#x, want %#x", got, want)
	}
	got = nil
	// lea 0x10(%rip),%rax: the address of a label
	Targets([]byte{0x48, 0x8d, 0x05, 0x10, 0, 0, 0}, at, func(a uint64) { got = append(got, a) })
	if want := []uint64{at + 7 + 0x10}; !slices.Equal(got, want) {
		t.Fatalf("Targets(lea) = %#x, want %#x", got, want)
	}
}
