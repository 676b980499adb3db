package pad

import (
	"fmt"
	"strings"
	"testing"

	"golang.org/x/arch/x86/x86asm"

	"github.com/utap/utap/internal/x86"
)

// TestBuildDispatch: after the displaced instructions, each number is
// compared with no flag changed and only rcx written (lea, jrcxz); a match
// jumps to the exit towards the original `syscall` (its trap), the rest
// make the call and jump back after it.
func TestBuildDispatch(t *testing.T) {
	const at, sc = 0x10000, 0x7f0000001234
	displaced := []byte{0x48, 0x89, 0xf8} // mov %rdi,%rax
	code, parts, err := BuildDispatch(displaced, at, []int{0x27, 0x6e}, nil, sc)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	var starts []int
	for off := 0; off < len(code); {
		inst, err := x86.Decode(code[off:])
		if err != nil {
			t.Fatalf("at %d: %v", off, err)
		}
		starts = append(starts, off)
		s := x86asm.IntelSyntax(inst, at+uint64(off), nil)
		if inst.Op == x86asm.JMP && inst.Args[0] != nil && strings.Contains(inst.Args[0].String(), "RIP") {
			s = "jmp abs"
		}
		got = append(got, s)
		off += inst.Len
		if s == "jmp abs" {
			off += 8 // its target
		}
	}
	probed := starts[len(starts)-1]
	want := []string{"mov rax, rdi"}
	for k, disp := range []string{"0xffffffd9", "0xffffff92"} { // -0x27, -0x6e
		base := uint64(at + 3 + 16*k)
		want = append(want, "lea rcx, ptr [rax+"+disp+"]", "jrcxz "+hexOf(base+11), "jmp "+hexOf(base+16),
			"jmp "+hexOf(uint64(at+probed)))
	}
	want = append(want, "syscall", "jmp abs", "jmp abs")
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("dispatch pad:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if parts.Compare != 3 || code[parts.Syscall] != 0x0f || code[parts.Syscall+1] != 0x05 {
		t.Errorf("parts %+v", parts)
	}
	back := code[parts.Syscall+8 : parts.Syscall+16]
	to := code[probed+6 : probed+14]
	if le(back) != sc+2 || le(to) != sc {
		t.Errorf("back %#x, to the trap %#x", le(back), le(to))
	}
	if _, _, err := BuildDispatch(nil, at, make([]int, MaxDispatch+1), nil, sc); err == nil {
		t.Error("more than MaxDispatch numbers: no error")
	}
	// A number with a pad of its own jumps there.
	code, _, err = BuildDispatch(displaced, at, []int{0x27, 0x6e}, map[int]uint64{0x6e: at + 0x1000}, sc)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := x86.Decode(code[3+16+11:])
	if err != nil || x86asm.IntelSyntax(inst, at+3+16+11, nil) != "jmp "+hexOf(at+0x1000) {
		t.Errorf("the second number's jump: % x (%v)", code[3+16+11:3+16+16], err)
	}
}

func hexOf(v uint64) string { return fmt.Sprintf("%#x", v) }

func le(b []byte) uint64 {
	var v uint64
	for i := len(b) - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

// TestBuildWatch: mmap's watch pad tests PROT_EXEC in rdx's low byte and
// MAP_ANONYMOUS in r10's through the tables (no flag changed, only rcx and
// r11): either clear goes to the call made in the pad, both set to the
// trap; prctl's compares rdi with PR_SET_SECCOMP.
func TestBuildWatch(t *testing.T) {
	const at, sc, table = 0x10000, 0x7f0000001234, 0x7f0000900000
	listing := func(code []byte) []string {
		var got []string
		for off := 0; off < len(code); {
			inst, err := x86.Decode(code[off:])
			if err != nil {
				t.Fatalf("at %d: %v", off, err)
			}
			s := x86asm.IntelSyntax(inst, at+uint64(off), nil)
			off += inst.Len
			if inst.Op == x86asm.JMP && strings.Contains(inst.Args[0].String(), "RIP") {
				s = fmt.Sprintf("jmp abs %#x", le(code[off:off+8]))
				off += 8
			}
			got = append(got, s)
		}
		return got
	}
	code, parts, err := BuildWatch([]byte{0xb8, 9, 0, 0, 0}, []WatchBit{{2, WatchExec}, {10, WatchAnon}}, nil, table, sc)
	if err != nil {
		t.Fatal(err)
	}
	call := hexOf(at + uint64(parts.Syscall))
	want := []string{
		"mov eax, 0x9",
		"mov r11, 0x7f0000900000",
		"movzx ecx, dl", "movzx ecx, byte ptr [r11+rcx]", "jrcxz " + call,
		"movzx ecx, r10b", "movzx ecx, byte ptr [r11+rcx+0x100]", "jrcxz " + call,
		fmt.Sprintf("jmp abs %#x", uint64(sc)),
		"syscall", fmt.Sprintf("jmp abs %#x", uint64(sc+2)),
	}
	if got := listing(code); strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("mmap's watch pad:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	pr := int32(22)
	code, parts, err = BuildWatch(nil, nil, &pr, 0, sc)
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"lea rcx, ptr [rdi+0xffffffea]", "jrcxz " + hexOf(at+11), "jmp " + hexOf(at+uint64(parts.Syscall)),
		fmt.Sprintf("jmp abs %#x", uint64(sc)), "syscall", fmt.Sprintf("jmp abs %#x", uint64(sc+2))}
	if got := listing(code); strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("prctl's watch pad:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	tab := WatchTable()
	if tab[WatchExec+7] != 1 || tab[WatchExec+3] != 0 || tab[WatchAnon+0x22] != 1 || tab[WatchAnon+0x02] != 0 {
		t.Errorf("tables: exec[7]=%d exec[3]=%d anon[0x22]=%d anon[2]=%d", tab[7], tab[3], tab[256+0x22], tab[256+2])
	}
}
