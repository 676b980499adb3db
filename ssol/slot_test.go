//go:build linux && amd64

package ssol

import (
	"bytes"
	"testing"

	"golang.org/x/sys/unix"
)

const (
	codeAddr = 0x401000
	nearSlot = 0x7f000000            // within ±2 GiB of codeAddr
	farSlot  = 0x7fff_f7ff_0000 + 64 // far beyond
)

// TestBoost checks relocated copies: disp32 rewritten for the slot, then
// the jump back.
func TestBoost(t *testing.T) {
	for _, c := range []struct {
		name, code string
		ripRel     bool
	}{
		{"mov rax,[rip]", "48 8b 05 00 01 00 00", true},
		{"lea rdi,[rip]", "48 8d 3d 20 00 00 00", true},
		{"cmp dword [rip],imm8", "83 3d 10 00 00 00 05", true},
		{"lock add [rip],imm8", "f0 83 05 10 00 00 00 01", true},
		{"lock cmpxchg [rip],rcx", "f0 48 0f b1 0d 10 00 00 00", true},
		{"lock cmpxchg16b [rip]", "f0 48 0f c7 0d 10 00 00 00", true},
		{"movdqa xmm0,[rip]", "66 0f 6f 05 10 00 00 00", true},
		{"movaps xmm1,[rip]", "0f 28 0d 10 00 00 00", true},
		{"vpaddq VEX2", "c5 f5 d4 05 10 00 00 00", true},
		{"vmovq VEX3 store", "c4 e1 f9 7e 05 10 00 00 00", true},
		{"vmovdqu64 EVEX", "62 f1 fe 48 6f 05 10 00 00 00", true},
		{"mov rax,[rip] addr32", "67 48 8b 05 00 01 00 00", true},
		{"push [rip]", "ff 35 10 00 00 00", true},
		{"cmove rax,rcx", "48 0f 44 c1", false},
		{"add rsp,8", "48 83 c4 08", false},
		{"mov [rsp+8],rdi", "48 89 7c 24 08", false},
		{"pause", "f3 90", false},
		{"xchg r8d,eax", "41 90", false},
		{"push word", "66 50", false},
		{"vmovdqu ymm0,[rsi]", "c5 fe 6f 06", false},
		{"mov rax,fs:[0x28]", "64 48 8b 04 25 28 00 00 00", false},
		{"cpuid", "0f a2", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			code := hexBytes(t, c.code)
			in, err := Analyze(code, codeAddr)
			if err != nil {
				t.Fatal(err)
			}
			if in.Action != Boost || len(in.Bytes) != len(code) {
				t.Fatalf("%s: action %d len %d, want Boost len %d", in.Text, in.Action, len(in.Bytes), len(code))
			}
			n := len(code)
			for _, slot := range []uint64{nearSlot, codeAddr - 0x1000} {
				got, err := in.Slot(slot)
				if err != nil {
					t.Fatal(err)
				}
				want := append([]byte(nil), code...)
				if c.ripRel {
					off := in.an.dispOff
					copy(want[off:], le32(int64(in.an.disp)+codeAddr-int64(slot)))
				}
				want = cat(want, []byte{0xe9}, le32(codeAddr+int64(n)-int64(slot+uint64(n)+5)))
				if !bytes.Equal(got, want) || in.Action != Boost {
					t.Errorf("slot %#x: % x (action %d), want % x", slot, got, in.Action, want)
				}
			}
			if !c.ripRel {
				// Far slot: the copy then jmp [rip+0] with the absolute address.
				got, err := in.Slot(farSlot)
				if err != nil {
					t.Fatal(err)
				}
				want := cat(code, hexBytes(t, "ff 25 00 00 00 00"), le64(codeAddr+uint64(n)))
				if !bytes.Equal(got, want) || len(got) > SlotSize {
					t.Errorf("far slot: % x, want % x", got, want)
				}
			}
		})
	}
}

// TestStep checks the out-of-range path: the RIP-relative operand goes
// through a scratch register and the slot ends with int3.
func TestStep(t *testing.T) {
	for _, c := range []struct {
		name, code, slot string
		scratch          int
	}{
		{"mov rax,[rip]", "48 8b 05 00 01 00 00", "48 8b 86 00 01 00 00 cc", rsi},
		{"mov rax,[rip] REX.B", "49 8b 05 00 01 00 00", "48 8b 86 00 01 00 00 cc", rsi},
		{"mov rsi,[rip]", "48 8b 35 00 01 00 00", "48 8b b7 00 01 00 00 cc", rdi},
		{"cmp dword [rip],imm8", "83 3d 10 00 00 00 05", "83 be 10 00 00 00 05 cc", rsi},
		{"lock cmpxchg16b [rip]", "f0 48 0f c7 0d 10 00 00 00", "f0 48 0f c7 8e 10 00 00 00 cc", rsi},
		{"vpaddq ymm0,ymm1,[rip]", "c5 f5 d4 05 10 00 00 00", "c5 f5 d4 86 10 00 00 00 cc", rsi},
		{"vpaddq ymm0,ymm6,[rip]", "c5 cd d4 05 10 00 00 00", "c5 cd d4 87 10 00 00 00 cc", rdi},
		{"vpaddq ymm6,ymm7,[rip]", "c5 c5 d4 35 10 00 00 00", "c5 c5 d4 b3 10 00 00 00 cc", rbx},
		{"vmovq VEX3 B set", "c4 c1 f9 7e 05 10 00 00 00", "c4 e1 f9 7e 86 10 00 00 00 cc", rsi},
		{"vmovdqu64 EVEX", "62 d1 fe 48 6f 05 10 00 00 00", "62 f1 fe 48 6f 86 10 00 00 00 cc", rsi},
	} {
		t.Run(c.name, func(t *testing.T) {
			code := hexBytes(t, c.code)
			in, err := Analyze(code, codeAddr)
			if err != nil {
				t.Fatal(err)
			}
			if a := in.ActionFor(farSlot); a != Step {
				t.Fatalf("ActionFor(far) = %d, want Step", a)
			}
			got, err := in.Slot(farSlot)
			if err != nil {
				t.Fatal(err)
			}
			if want := hexBytes(t, c.slot); !bytes.Equal(got, want) || in.Action != Step {
				t.Fatalf("slot % x (action %d), want % x", got, in.Action, want)
			}

			var regs unix.PtraceRegs
			regs.Rip = codeAddr + 1
			for i := range 16 {
				*gpr(&regs, i) = uint64(0x1000 * (i + 1))
			}
			before := regs
			st := in.PreStep(&regs, farSlot)
			if st.Scratch != c.scratch || regs.Rip != farSlot {
				t.Fatalf("PreStep: scratch %d rip %#x", st.Scratch, regs.Rip)
			}
			if v := *gpr(&regs, c.scratch); v != codeAddr+uint64(len(code)) {
				t.Fatalf("scratch %s = %#x, want Addr+len", regNames[c.scratch], v)
			}
			regs.Rip = farSlot + uint64(len(got)) // trapped after the int3
			if err := in.PostStep(&regs, st, nil); err != nil {
				t.Fatal(err)
			}
			before.Rip = codeAddr + uint64(len(code))
			if regs != before {
				t.Fatalf("PostStep regs %+v, want %+v", regs, before)
			}
			if pc := in.SlotPC(farSlot, farSlot); pc != codeAddr {
				t.Errorf("SlotPC(slot) = %#x", pc)
			}
			if pc := in.SlotPC(farSlot+uint64(len(code))+1, farSlot); pc != codeAddr+uint64(len(code)) {
				t.Errorf("SlotPC(after) = %#x", pc)
			}
		})
	}
}

func TestSlotOfEmulated(t *testing.T) {
	in, err := Analyze([]byte{0xc3}, codeAddr)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := in.Slot(nearSlot); err == nil {
		t.Fatal("Slot of ret: want an error")
	}
}

// TestPreStepBoost: a RIP-relative instruction boosted from a near slot
// touches no scratch register.
func TestPreStepBoost(t *testing.T) {
	in, err := Analyze(hexBytes(t, "48 8b 05 00 01 00 00"), codeAddr)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := in.Slot(nearSlot); err != nil {
		t.Fatal(err)
	}
	regs := unix.PtraceRegs{Rsi: 7}
	if st := in.PreStep(&regs, nearSlot); st.Scratch != -1 || regs.Rsi != 7 || regs.Rip != nearSlot {
		t.Fatalf("PreStep on Boost: %+v, rsi %#x", st, regs.Rsi)
	}
}
