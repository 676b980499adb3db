package x86

import (
	"strings"
	"testing"
)

func TestStackCheckEnd(t *testing.T) {
	for _, c := range []struct {
		code string
		end  int // 0: no check
	}{
		// cmp rsp, [r14+0x10]; jbe; push rbp
		{"49 3b 66 10 76 2b 55", 6},
		// lea r12, [rsp-8]; cmp r12, [r14+0x10]; jbe (rel32)
		{"4c 8d 64 24 f8 4d 3b 66 10 0f 86 00 01 00 00 55", 15},
		// ABI0: mov rcx, fs:[-8]; cmp rsp, [rcx+0x10]; jbe
		{"64 48 8b 0c 25 f8 ff ff ff 48 3b 61 10 76 10", 15},
		// huge frame: mov r12, rsp; sub r12, 0x10000; jb; cmp r12, [r14+0x10]; jbe
		{"49 89 e4 49 81 ec 00 00 01 00 72 20 4d 3b 66 10 76 1a", 18},
		// endbr64 first: stepped over as the nop it is
		{"f3 0f 1e fa 49 3b 66 10 76 2b", 10},
		{"55 48 89 e5 c3", 0},                               // no check (nosplit)
		{"49 3b 66 10 74 02", 0},                            // cmp, then je
		{"49 3b 66 18 76 02", 0},                            // another displacement
		{"49 3b 66 10", 0},                                  // cut after the cmp
		{"d5 00 00 49 3b 66 10 76 2b", 0},                   // undecodable first
		{strings.Repeat("90 ", 8) + "49 3b 66 10 76 2b", 0}, // beyond 8 instructions
		{"", 0},
	} {
		end, ok := StackCheckEnd(hexBytes(t, c.code), 0x10)
		if end != c.end || ok != (c.end != 0) {
			t.Errorf("%s: %d, %v; want %d", c.code, end, ok, c.end)
		}
	}
}

func TestText(t *testing.T) {
	for _, c := range []struct{ code, want string }{
		{"48 8b 05 10 00 00 00 90", "mov rax, qword ptr [rip+0x10] (48 8b 05 10 00 00 00)"},
		{"f0 48 83 07 01", "lock add qword ptr [rdi], 0x1 (f0 48 83 07 01)"},
		{"f3 0f 1e fa", "endbr64 (f3 0f 1e fa)"},
		{"c5 f8 77 c3", "vzeroupper (c5 f8 77)"},
		{"d5 00 00", "d5 00 00"},
		{"48 8b", "48 8b"},
	} {
		if got := Text(hexBytes(t, c.code)); got != c.want {
			t.Errorf("Text(%s) = %q, want %q", c.code, got, c.want)
		}
	}
}
