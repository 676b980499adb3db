//go:build linux && amd64

package ssol

import (
	"testing"

	"github.com/utap/utap/internal/x86"
	"golang.org/x/sys/unix"
)

// FuzzAnalyze: Analyze never panics; a Boost (or Step) slot decodes to the
// same instruction with the same length and, when RIP-relative, the same
// operand address; Emulate never panics.
func FuzzAnalyze(f *testing.F) {
	for _, s := range []string{
		"48 8b 05 00 01 00 00", "f0 48 0f b1 0d 10 00 00 00", "c5 f5 d4 05 10 00 00 00",
		"c4 c1 f9 7e 05 10 00 00 00", "62 d1 fe 48 6f 05 10 00 00 00", "ff 15 10 00 00 00",
		"ff 64 d8 10", "67 e2 f0", "f3 0f 1e fa", "66 2e 0f 1f 84 00 00 00 00 00", "c2 10 00",
		"83 3d 10 00 00 00 05", "c5 f8 77", "d5 00 00", "0f 05",
	} {
		f.Add(hexBytes(f, s))
	}
	f.Fuzz(func(t *testing.T, code []byte) {
		in, err := Analyze(code, codeAddr)
		if err != nil {
			return
		}
		n := len(in.Bytes)
		if n == 0 || n > 15 {
			t.Fatalf("length %d", n)
		}
		want, err := x86.Decode(in.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		switch in.Action {
		case Emulate:
			var regs unix.PtraceRegs
			regs.Rsp = stackTop
			_ = in.Emulate(&regs, newMem(stackTop-64, stackTop+64))
		case Boost:
			for _, slot := range []uint64{nearSlot, farSlot} {
				s, err := in.Slot(slot)
				if err != nil || len(s) > SlotSize {
					t.Fatalf("% x: slot %d bytes, %v", in.Bytes, len(s), err)
				}
				re, err := Analyze(s, slot)
				if err != nil {
					t.Fatalf("% x: slot % x does not analyse: %v", in.Bytes, s, err)
				}
				got, _ := x86.Decode(s)
				if len(re.Bytes) != n || got.Op != want.Op {
					t.Fatalf("% x (%s) → slot % x (%s)", in.Bytes, in.Text, s, re.Text)
				}
				if in.Action == Boost && in.an.dispOff >= 0 {
					if a, b := in.Addr+uint64(n)+uint64(int64(in.an.disp)), slot+uint64(n)+uint64(int64(re.an.disp)); a != b {
						t.Fatalf("% x: operand %#x, from the slot %#x", in.Bytes, a, b)
					}
				}
				if in.Action == Step && (re.an.dispOff >= 0 || s[n] != 0xcc) {
					t.Fatalf("% x: step slot % x still RIP-relative", in.Bytes, s)
				}
				in.Action = Boost
			}
		}
	})
}
