package ssol

import (
	"bytes"
	"errors"
	"testing"

	"golang.org/x/arch/x86/x86asm"
)

// TestPlanHop: glibc's memmove, whose fourth byte mempcpy jumps to, and
// a function of three bytes take a hop through the nops before them; the
// hop's bytes decode from the padding's start to the function as the
// path falling through them: nops, then the jump.
func TestPlanHop(t *testing.T) {
	const preAddr, fnAddr = 0x1000, 0x1020
	// cmp %rdx,%rcx; jb +0x100; then nops to 0x1020 (as __memmove_chk).
	pre := []byte{0x48, 0x39, 0xd1, 0x0f, 0x82, 0x00, 0x01, 0x00, 0x00}
	for len(pre) < fnAddr-preAddr-11 {
		pre = append(pre, 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00) // nopw 0(%rax,%rax)
	}
	for len(pre) < fnAddr-preAddr {
		pre = append(pre, 0x90)
	}
	memmove := []byte{0x48, 0x89, 0xf8, 0x48, 0x83, 0xfa, 0x20, 0xc3} // mov %rdi,%rax; cmp $0x20,%rdx; ret
	landing := func(a uint64) bool { return a == fnAddr+3 }
	if _, err := PlanPad(memmove, fnAddr, fnAddr, landing); !errors.Is(err, ErrNoPad) {
		t.Fatalf("PlanPad over the landing: %v", err)
	}
	before := func() (Before, error) { return Before{pre, preAddr, landing}, nil }
	d, err := PlanEntry(memmove, fnAddr, landing, before)
	if err != nil {
		t.Fatal(err)
	}
	start, n := d.Span()
	if d.Len != 3 || d.Hop == 0 || start != d.Hop || d.Hop+JumpLen > fnAddr || start+uint64(n) != fnAddr+3 {
		t.Fatalf("len %d, hop %#x, span %#x+%d", d.Len, d.Hop, start, n)
	}
	jmp, err := d.Jump(0x5000)
	if err != nil {
		t.Fatal(err)
	}
	// The padding with the hop's bytes in, decoded from preAddr: the
	// instructions of before, the jump at the hop, the jmp rel8 at fnAddr.
	code := append(append([]byte(nil), pre...), memmove[:2]...)
	copy(code[d.Hop-preAddr:], jmp)
	var starts []uint64
	walk(code, preAddr, false, func(pc uint64, _ x86asm.Inst) bool { starts = append(starts, pc); return true })
	if !containsAll(starts, d.Hop, fnAddr) || jmp[0] != 0xe9 || !bytes.Equal(jmp[len(jmp)-2:], []byte{0xeb, byte(int8(int64(d.Hop) - int64(fnAddr+2)))}) {
		t.Errorf("hop bytes % x at %#x: boundaries %#x", jmp, d.Hop, starts)
	}

	tiny := []byte{0x31, 0xc0, 0xc3} // xor %eax,%eax; ret
	if d, err := PlanEntry(tiny, fnAddr, nil, before); err != nil || d.Len != 2 || d.Hop == 0 {
		t.Errorf("tiny: %+v, %v", d, err)
	}
	// Refused: a landing in the padding; no padding (an instruction ends
	// at the entry).
	busy := func(a uint64) bool { return a == fnAddr+3 || a == fnAddr-2 }
	// A landing inside an instruction of the code before (the jb's
	// rel32): its decoding is not to be trusted. Busy there (another
	// pad's jump over the jb) is no matter.
	inside := func(a uint64) bool { return a == fnAddr+3 || a == preAddr+5 }
	noPad := append(append([]byte(nil), pre[:len(pre)-3]...), 0x48, 0x89, 0xc8) // mov %rcx,%rax
	for name, c := range map[string]struct {
		pre         []byte
		busy, lands func(uint64) bool
	}{
		"busy padding":     {pre, busy, landing},
		"no padding":       {noPad, landing, landing},
		"a landing inside": {pre, landing, inside},
	} {
		p := c.pre
		if _, err := PlanHop(Before{p, fnAddr - uint64(len(p)), c.lands}, memmove, fnAddr, c.busy); !errors.Is(err, ErrNoPad) {
			t.Errorf("%s: %v, want a refusal", name, err)
		}
	}
	taken := func(a uint64) bool { return a == fnAddr+3 || a == preAddr+5 }
	if _, err := PlanHop(Before{pre, preAddr, landing}, memmove, fnAddr, taken); err != nil {
		t.Errorf("another pad's bytes in the code before: %v", err)
	}
}

func containsAll(list []uint64, want ...uint64) bool {
	for _, w := range want {
		found := false
		for _, v := range list {
			found = found || v == w
		}
		if !found {
			return false
		}
	}
	return true
}
