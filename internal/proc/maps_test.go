//go:build linux && amd64

package proc

import (
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"
)

func TestMapsParse(t *testing.T) {
	m, ok := parseMapping("7f1c2a000000-7f1c2a028000 r--p 00001000 fd:01 1234567                    /usr/lib/x86_64-linux-gnu/libc.so.6 (deleted)")
	want := Mapping{Start: 0x7f1c2a000000, End: 0x7f1c2a028000, Offset: 0x1000, Perms: "r--p", Dev: "fd:01", Inode: 1234567,
		Path: "/usr/lib/x86_64-linux-gnu/libc.so.6 (deleted)"}
	if !ok || m != want {
		t.Errorf("got %+v, want %+v", m, want)
	}
	if m, ok := parseMapping("7ffd1000-7ffd2000 rw-p 00000000 00:00 0 "); !ok || m.Path != "" {
		t.Errorf("anonymous: %+v %v", m, ok)
	}
}

// TestLoaderRendezvous finds the loader's hook in a running process, whose
// link map is complete.
func TestLoaderRendezvous(t *testing.T) {
	cmd := exec.Command("sleep", "10")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	time.Sleep(50 * time.Millisecond)
	r, err := LoaderRendezvous(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if r.Brk == 0 || r.State == 0 || !r.BrkReturns {
		t.Fatalf("%+v", r)
	}
	mem, err := os.Open(fmt.Sprintf("/proc/%d/mem", cmd.Process.Pid))
	if err != nil {
		t.Skip(err)
	}
	defer mem.Close()
	var b [4]byte
	if _, err := mem.ReadAt(b[:], int64(r.State)); err != nil {
		t.Fatal(err)
	}
	if st := binary.LittleEndian.Uint32(b[:]); st != RTConsistent {
		t.Errorf("r_state %d in a running process, want RT_CONSISTENT", st)
	}
}
