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

// TestSysAreas: a call whose values fit the small area takes it, with its
// own record kind and room; a path takes the large one; the areas lie
// apart, inside the ring.
func TestSysAreas(t *testing.T) {
	const n = DefaultRecords
	getppid := Spec{Records: n, Sys: &SysSpec{Nr: 110}}
	read := Spec{Records: n, Sys: &SysSpec{Nr: 0, Caps: []SysCap{{Arg: 1, Exit: true, LenRet: true, LenArg: -1, Max: 32}}}}
	openat := Spec{Records: n, Sys: &SysSpec{Nr: 257, Caps: []SysCap{{Arg: 1, Str: true, Max: 4096}}}}
	for _, c := range []struct {
		name string
		s    Spec
		kind uint8
		room int32
	}{
		{"getppid", getppid, KindSysSmall, sysSmallRecords},
		{"read -s 32", read, KindSysSmall, sysSmallRecords},
		{"openat", openat, KindSys, SysRecords},
	} {
		if k := kindOf(c.s); k != c.kind {
			t.Errorf("%s: kind %d, want %d", c.name, k, c.kind)
		}
		if r := room(c.s); r != c.room {
			t.Errorf("%s: room %d, want %d", c.name, r, c.room)
		}
	}
	last := uint64(1<<40 - 1)
	if end := SysAt(n, last, false) + SysSpace; end > SysAt(n, 0, true) {
		t.Errorf("the large area ends at %d, past the small one's start %d", end, SysAt(n, 0, true))
	}
	if end := SysAt(n, last, true) + sysSmallSpace; end > Size(n) {
		t.Errorf("the small area ends at %d, past the ring's %d bytes", end, Size(n))
	}
	// A ring of fewer records than either area has indexes for.
	if r := room(Spec{Records: 64, Sys: getppid.Sys}); r != 64 {
		t.Errorf("room in a ring of 64: %d", r)
	}
}
