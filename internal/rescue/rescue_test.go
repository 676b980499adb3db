//go:build linux && amd64

package rescue

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/internal/proc"
)

func TestInt3Runs(t *testing.T) {
	orig := []byte{0x55, 0x48, 0x89, 0xe5, 0x90, 0x90, 0x90, 0x90, 0x0f, 0x05, 0xc3, 0x90, 0x90, 0x90}
	cur := append([]byte(nil), orig...)
	cur[0] = 0xcc                                           // a breakpoint: restored
	cur[4], cur[5], cur[6], cur[7] = 0xe9, 0x11, 0xcc, 0xcc // a jump whose rel32 holds int3 bytes: kept
	cur[8] = 0xcc                                           // right after it: within a rel32's reach, kept
	cur[12] = 0xcc                                          // a breakpoint again
	got := fmt.Sprint(int3Runs(cur, orig))
	if want := "[[0 1] [12 13]]"; got != want {
		t.Fatalf("int3Runs = %s, want %s", got, want)
	}
}

// TestUndo writes int3s into real processes' libc and vDSO, and a jump
// holding int3 bytes, as a tracer would, and wants Undo to take out the
// int3s of the processes listed, and nothing else.
func TestUndo(t *testing.T) {
	need.Root(t) // writes other processes' code through /proc/PID/mem
	listed, other := sleeper(t), sleeper(t)
	tbl, err := New()
	if err != nil {
		t.Fatal(err)
	}
	tbl.add(listed)
	// A pid whose start time is not the listed one's: another process.
	tbl.add(other)
	for i := range entries {
		if e := tbl.at(i); int(e.pid) == other {
			e.start++
		}
	}
	var patched [2][]patch
	for i, pid := range []int{listed, other} {
		patched[i] = patchCode(t, pid)
	}
	res := tbl.Undo()
	if len(res) != 1 || res[0].Pid != listed || res[0].Err != nil || res[0].Bytes != 2 {
		t.Fatalf("Undo = %+v, want pid %d's 2 bytes", res, listed)
	}
	for _, p := range patched[0] {
		p.check(t, listed, !p.jump)
	}
	for _, p := range patched[1] {
		p.check(t, other, false)
	}
	// Gone from the list, a process is left alone.
	tbl.remove(listed)
	if res := tbl.undoAll(); len(res) != 0 {
		t.Fatalf("Undo after remove = %+v", res)
	}
}

// sleeper is a sleep(1) process with its libc mapped.
func sleeper(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(5 * time.Millisecond) {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/maps", cmd.Process.Pid))
		if bytes.Contains(b, []byte("libc.so")) && bytes.Contains(b, []byte("[vdso]")) {
			return cmd.Process.Pid
		}
	}
	t.Fatal("sleep never mapped libc")
	return 0
}

// patch is bytes written into a process's code, and what they were.
type patch struct {
	addr       int64
	orig, with []byte
	jump       bool
}

// patchCode writes an int3 into pid's libc text and vDSO, and a jump
// with int3 bytes in its rel32 into its libc text.
func patchCode(t *testing.T, pid int) []patch {
	t.Helper()
	maps, err := proc.Maps(pid)
	if err != nil {
		t.Fatal(err)
	}
	mem, err := os.OpenFile(fmt.Sprintf("/proc/%d/mem", pid), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	var out []patch
	for _, m := range maps {
		if !strings.Contains(m.Perms, "x") || !(strings.Contains(m.Path, "libc.so") || m.Path == "[vdso]") {
			continue
		}
		code := make([]byte, 2048)
		if _, err := mem.ReadAt(code, int64(m.Start)+64); err != nil {
			t.Fatal(err)
		}
		at := func(i int, with ...byte) {
			p := patch{addr: int64(m.Start) + 64 + int64(i), orig: append([]byte(nil), code[i:i+len(with)]...), with: with, jump: len(with) > 1}
			if _, err := mem.WriteAt(with, p.addr); err != nil {
				t.Fatal(err)
			}
			out = append(out, p)
		}
		i := usable(code, 8, 1)
		at(i, 0xcc)
		if m.Path != "[vdso]" {
			at(usable(code, i+16, 5), 0xe9, 0x01, 0xcc, 0xcc, 0xcc)
		}
	}
	if len(out) != 3 {
		t.Fatalf("pid %d: %d patches, want libc's two and the vDSO's", pid, len(out))
	}
	return out
}

// usable is an index from i on where n bytes of code hold no int3 nor
// 0xe9, nor do the four before.
func usable(code []byte, i, n int) int {
	for ; i+n < len(code); i++ {
		if !bytes.ContainsAny(code[i-4:i+n], "\xcc\xe9") {
			return i
		}
	}
	panic("no usable bytes")
}

// check wants p's original bytes back in pid if restored, else its own.
func (p patch) check(t *testing.T, pid int, restored bool) {
	t.Helper()
	b := make([]byte, len(p.with))
	f, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.ReadAt(b, p.addr); err != nil {
		t.Fatal(err)
	}
	want := p.with
	if restored {
		want = p.orig
	}
	if !bytes.Equal(b, want) {
		t.Errorf("pid %d at %#x: % x, want % x (restored %v)", pid, p.addr, b, want, restored)
	}
}
