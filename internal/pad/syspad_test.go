package pad

import (
	"strings"
	"testing"

	"github.com/utap/utap/internal/x86"
	"golang.org/x/arch/x86/x86asm"
)

// TestStartTSC: the code before a system call pad's `syscall` keeps
// every register and flag the call sees (only mov and rdtsc; rdx back,
// eax the number) and leaves the TSC where the record's code reads it.
func TestStartTSC(t *testing.T) {
	code := startTSC(0x6e)
	var got []string
	for len(code) > 0 {
		inst, err := x86.Decode(code)
		if err != nil {
			t.Fatalf("% x: %v", code, err)
		}
		got = append(got, x86asm.IntelSyntax(inst, 0, nil))
		code = code[inst.Len:]
	}
	// x86asm prints a negative disp32 as its 32 bits: 0xffffff78 is -0x88.
	want := []string{
		"mov qword ptr [rsp+0xffffff78], rdx",
		"rdtsc",
		"mov dword ptr [rsp+0xffffff70], eax",
		"mov dword ptr [rsp+0xffffff74], edx",
		"mov rdx, qword ptr [rsp+0xffffff78]",
		"mov eax, 0x6e",
	}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("startTSC:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
