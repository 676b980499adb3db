//go:build linux && amd64

package ssol

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestRefused(t *testing.T) {
	for _, c := range []struct {
		code, why string
	}{
		{"0f 05", "syscall"},
		{"0f 34", "sysenter"},
		{"cd 80", "int n"},
		{"f1", "int1"},
		{"f4", "hlt"},
		{"fa", "cli/sti"},
		{"fb", "cli/sti"},
		{"ec", "port I/O"},
		{"e6 80", "port I/O"},
		{"6c", "port I/O"},
		{"0f 0b", "ud2"},
		{"0f 01 c1", "0f 01"}, // vmcall
		{"0f 01 d0", ""},      // xgetbv: allowed
		{"0f 00 c0", "0f 00"}, // sldt
		{"0f 30", "privileged"},
		{"0f 32", "privileged"},
		{"0f 78 c0", "vmread"},
		{"8e d0", "segment register"}, // mov ss, eax
		{"c7 f8 00 00 00 00", "xbegin"},
		{"c6 f8 01", "xabort"},
		{"cb", "far return"},
		{"48 cf", "iret"},
		{"ff 1d 10 00 00 00", "far call/jmp"},
		{"ff 2d 10 00 00 00", "far call/jmp"},
		{"66 e8 10 00 00 00", "66-prefixed branch"},
		{"66 c3", "66-prefixed branch"},
		{"66 0f 84 10 00 00 00", "66-prefixed branch"},
		{"66 ff d0", "66-prefixed branch"},
		{"f0 90", "lock"},
		{"f0 ff d0", "lock"},
		{"d5 00 00", "APX"},
		{"f3 48 0f 1e c8", "cannot decode"}, // rdsspq, which x86asm cannot follow
		{"06", "invalid in 64-bit mode"},    // push es: invalid in 64-bit mode
		{"0f 0f c1 b4", "3DNow!"},           // 3DNow!
		{"48 8b", "cannot decode"},          // truncated
		{"", "cannot decode"},
		{"c5 f8 77", ""}, // vzeroupper: not refused
	} {
		t.Run(c.code, func(t *testing.T) {
			in, err := Analyze(hexBytes(t, c.code), codeAddr)
			if c.why == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatalf("%s: action %d, want refused (%s)", in.Text, in.Action, c.why)
			}
			if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), c.why) ||
				!strings.Contains(err.Error(), fmt.Sprintf("%#x", codeAddr)) {
				t.Fatalf("err %q: want ErrRefused naming %#x and %q", err, codeAddr, c.why)
			}
			t.Log(err)
		})
	}
}

func TestBreakpointThere(t *testing.T) {
	_, err := Analyze([]byte{0xcc, 0x90}, codeAddr)
	if !errors.Is(err, ErrBreakpoint) {
		t.Fatalf("err %v, want ErrBreakpoint", err)
	}
}
